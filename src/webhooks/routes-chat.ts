// POST /webhooks/chat/commands and /webhooks/chat/events: signed by the chat platform, one task per message.
import { Type } from '../lib/typebox.ts';
import type { Clock } from '../lib/clock.ts';
import { badRequest, HttpError, notFound, unauthorized } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import { defineRoute, type Route, type RouteContext } from '../lib/route.ts';
import { commandPlan, createdAnswer, eventPlan, parseForm, queuedAnswer, type ChatTask } from './chat.ts';
import { Background, E, headerGet, within } from './http.ts';
import type { Ledger } from './ledger.ts';
import type { WebhookMetrics } from './metrics.ts';
import { parseObject } from './receiver.ts';
import { checkChatSignature, sha256Hex } from './signature.ts';
import type { TaskPort } from './tasks.ts';

/** What the chat routes need. */
export interface ChatDeps {
  env: (name: string) => string | undefined;
  /** A signing secret configured on the server; wins over SERVICE_CHAT_SIGNING_SECRET. */
  signingSecret?: string;
  clock: Clock;
  /** Keys of handled messages (trigger and event ids), so platform retries create nothing twice. */
  ledger: Ledger;
  tasks: TaskPort;
  metrics: WebhookMetrics;
  log: Logger;
  background: Background;
  /** How long a slash command waits for its task before answering that it is queued (default 1500 ms, within the 3 s window). */
  ackMs?: number;
}

const NOT_CONFIGURED = 'Chat webhook endpoint is not configured: set SERVICE_CHAT_SIGNING_SECRET to the signing secret issued by the chat app.';
const Ephemeral = Type.Object({ response_type: Type.Literal('ephemeral'), text: Type.String() });

/** The two chat routes. */
export function chatRoutes(deps: ChatDeps): Route[] {
  const mutex = new KeyedMutex();
  const inflight = new Map<string, Promise<string>>();

  // 404 without a secret, 401 unless the signature over the exact bytes holds and is fresh.
  const verify = (ctx: RouteContext<unknown, unknown, unknown>): Buffer => {
    const secret = deps.signingSecret || deps.env('SERVICE_CHAT_SIGNING_SECRET') || '';
    if (!secret) throw notFound(NOT_CONFIGURED);
    const h = headerGet(ctx.req);
    const raw = ctx.raw ?? Buffer.alloc(0);
    const why = checkChatSignature(secret, raw, h('x-chat-request-timestamp') ?? h('x-slack-request-timestamp'), h('x-chat-signature') ?? h('x-slack-signature'), deps.clock.now());
    if (why) {
      deps.metrics.rejected('chat', why === 'signature mismatch' ? 'bad_signature' : 'bad_timestamp');
      throw unauthorized('Invalid chat signature');
    }
    return raw;
  };

  // The task of one message, created once per key however often the platform sends it; resolves to its id.
  const createOnce = (key: string, task: ChatTask, retry: boolean): Promise<string> => {
    const known = deps.ledger.get(key)?.task_id;
    const running = inflight.get(key);
    if (known || running) {
      if (retry) deps.metrics.replayed('chat');
      return running ?? Promise.resolve(known!);
    }
    const p = mutex.run(key, async () => {
      const seen = deps.ledger.get(key);
      if (seen?.task_id) return seen.task_id;
      const who = { actor: `chat:${task.chat_context.user_id ?? task.chat_context.user ?? 'unknown'}`, tenant: deps.tasks.tenant() };
      const created = await deps.tasks.create(task, who);
      deps.metrics.accepted('chat');
      deps.metrics.outcome('chat', 'created');
      await deps.ledger.record(key, { task_id: created.id });
      return created.id;
    });
    inflight.set(key, p);
    void p.finally(() => inflight.delete(key)).catch(() => undefined);
    deps.background.track(p).catch((err: Error) => deps.log.error(`chat task not created: ${err.message}`));
    return p;
  };
  const retried = (ctx: RouteContext<unknown, unknown, unknown>) => {
    const h = headerGet(ctx.req);
    return (h('x-chat-retry-num') ?? h('x-slack-retry-num')) !== undefined;
  };

  return [
    defineRoute({
      method: 'POST', path: '/webhooks/chat/commands', operationId: 'chat_command', tags: ['webhooks'], access: 'hmac', rawBody: true,
      summary: 'Chat slash command (form): one task from its text; answered within 3 s, the task created once however often it is sent',
      responses: { 200: { description: 'Ephemeral answer', schema: Ephemeral }, 401: E('Bad or stale signature'), 404: E('No signing secret configured') },
      handler: async (ctx) => {
        const raw = verify(ctx);
        const plan = commandPlan(parseForm(raw));
        if (plan.kind === 'empty') return { response_type: 'ephemeral', text: plan.answer };
        const p = createOnce(plan.key ?? `command-body:${sha256Hex(raw)}`, plan.task, retried(ctx));
        // Answer first: a store that is slow right now must not cost the platform's 3 s window.
        const id = await within(p.catch((err: unknown) => err as Error), deps.ackMs ?? 1500, null);
        if (id instanceof Error) {
          const detail = id instanceof HttpError ? id.message : 'internal error';
          return { response_type: 'ephemeral', text: `Could not create the task: ${detail}` };
        }
        return { response_type: 'ephemeral', text: id ? createdAnswer(id, plan.task.title) : queuedAnswer(plan.task.title) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/webhooks/chat/events', operationId: 'chat_events', tags: ['webhooks'], access: 'hmac', rawBody: true,
      summary: 'Chat Events API: url_verification, and a task from a message that mentions the bot',
      responses: { 200: { description: '{ok: true} or {challenge}' }, 400: E('Malformed payload'), 401: E('Bad or stale signature'), 404: E('No signing secret configured') },
      handler: (ctx) => {
        const raw = verify(ctx);
        const body = parseObject(raw);
        const plan = body && raw.length > 0 ? eventPlan(body, deps.env('SERVICE_CHAT_BOT_USER_ID') || undefined) : { kind: 'bad' as const };
        if (plan.kind === 'bad') throw badRequest('Bad events payload');
        if (plan.kind === 'challenge') return { challenge: plan.challenge };
        // The platform only needs the 200: the task is created behind it.
        if (plan.kind === 'create') createOnce(plan.key ?? `event-body:${sha256Hex(raw)}`, plan.task, retried(ctx)).catch(() => undefined);
        return { ok: true };
      },
    }),
  ];
}
