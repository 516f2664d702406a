// POST /webhook (a signed TaskCreate) and POST /hooks/{session_id} (agent hook events into the session's log).
import { Type } from '../lib/typebox.ts';
import type { Clock } from '../lib/clock.ts';
import { badRequest, notFound, unauthorized, unavailable } from '../lib/http-error.ts';
import { defineRoute, reply, type Route } from '../lib/route.ts';
import { E, headerGet } from './http.ts';
import type { WebhookMetrics } from './metrics.ts';
import { parseObject } from './receiver.ts';
import { checkTimestampedSignature, hmacHex, digestMatches } from './signature.ts';
import { TaskCreateSchema, TaskSchema, type TaskPort } from './tasks.ts';

/** The agent sessions whose logs hook events go to. */
export interface HookSessions {
  /** True for a session the server knows (running, or with a log). */
  known(sid: string): boolean | Promise<boolean>;
  /** Append one line to the session's log (its SSE stream shows it). */
  append(sid: string, line: string): Promise<void>;
}

export interface HookDeps {
  env: (name: string) => string | undefined;
  clock: Clock;
  tasks: TaskPort;
  sessions: HookSessions;
  metrics: WebhookMetrics;
}

const ACTIONS: Record<string, string> = {
  PostToolUse: 'tool_use_logged', Stop: 'stop_logged', PreCompact: 'compaction_logged',
  SubagentStart: 'subagent_start_logged', SubagentStop: 'subagent_stop_logged',
};
const HookAnswer = Type.Object({ status: Type.Literal('ok'), action: Type.String() });

/** The log line of a hook event: `[hook] <event>`, with the tool and its input (cut to 200 characters) for tool use. */
export function hookLine(body: Record<string, unknown>): { event: string; line: string } {
  const named = typeof body.hook_event_name === 'string' ? body.hook_event_name : typeof body.event === 'string' ? body.event : '';
  const event = named in ACTIONS ? named : 'Unknown';
  let line = `[hook] ${event === 'Unknown' && named ? `${event} (${named.slice(0, 64)})` : event}`;
  if (event === 'PostToolUse') {
    const input = body.tool_input ?? body.input;
    const text = typeof input === 'string' ? input : input === undefined ? '' : JSON.stringify(input);
    line += ` ${typeof body.tool_name === 'string' ? body.tool_name.slice(0, 64) : 'tool'}: ${text.slice(0, 200)}`;
  }
  return { event, line: line.replace(/[\r\n]+/g, ' ') };
}

/** /webhook and /hooks/{session_id}. */
export function hookRoutes(deps: HookDeps): Route[] {
  const secretOf = (name: string, label: string) => {
    const s = deps.env(name)?.trim();
    if (!s) throw unavailable(`${label} endpoint is not configured: set ${name} to the shared secret used by the caller.`);
    return s;
  };
  return [
    defineRoute({
      method: 'POST', path: '/webhook', operationId: 'webhook_create_task', tags: ['webhooks'], access: 'hmac', rawBody: true, body: TaskCreateSchema,
      summary: 'Create a task from a signed request: X-Signature-256 = sha256=HMAC(SERVICE_WEBHOOK_SECRET, "<X-Timestamp>." + body)',
      responses: { 201: { description: 'Created', schema: Type.Ref(TaskSchema) }, 401: E('Bad, missing or stale signature'), 503: E('SERVICE_WEBHOOK_SECRET unset, or draining') },
      verify: ({ req, raw }) => {
        const secret = secretOf('SERVICE_WEBHOOK_SECRET', 'Webhook');
        const h = headerGet(req);
        const why = checkTimestampedSignature(secret, raw, h('x-timestamp'), h('x-signature-256'), deps.clock.now());
        if (why) { deps.metrics.rejected('webhook', why === 'Invalid webhook signature' ? 'bad_signature' : 'bad_timestamp'); throw unauthorized(why); }
      },
      handler: async (ctx) => {
        const task = await deps.tasks.create(ctx.body, { actor: 'webhook', tenant: deps.tasks.tenant(ctx.body.tenant) });
        deps.metrics.accepted('webhook');
        return reply(201, task);
      },
    }),
    defineRoute({
      method: 'POST', path: '/hooks/:session_id', operationId: 'agent_hook', tags: ['webhooks'], access: 'hmac', rawBody: true,
      summary: 'Agent hook event (JSON), signed X-Signature-256 = sha256=HMAC(SERVICE_HOOK_SECRET, body), appended to the session\'s log',
      params: Type.Object({ session_id: Type.String() }),
      responses: { 200: { description: 'Logged', schema: HookAnswer }, 400: E('Not a JSON object'), 401: E('Bad or missing signature'), 404: E('Unknown session'), 503: E('SERVICE_HOOK_SECRET unset') },
      handler: async (ctx) => {
        const secret = secretOf('SERVICE_HOOK_SECRET', 'Hook');
        const raw = ctx.raw ?? Buffer.alloc(0);
        if (!digestMatches(headerGet(ctx.req)('x-signature-256'), hmacHex(secret, raw), 'sha256=')) {
          deps.metrics.rejected('hooks', 'bad_signature');
          throw unauthorized('Invalid or missing hook signature');
        }
        const sid = ctx.params.session_id;
        if (!(await deps.sessions.known(sid))) throw notFound(`Session '${sid.slice(0, 100)}' not found`);
        const body = parseObject(raw);
        if (!body) throw badRequest('invalid JSON body: expected an object');
        const { event, line } = hookLine(body);
        await deps.sessions.append(sid, line);
        deps.metrics.accepted('hooks');
        return { status: 'ok', action: ACTIONS[event] ?? 'event_logged' };
      },
    }),
  ];
}
