// Chat platform payloads (pure): a slash command or a message event → the task to create, or why not.
import { cut } from './ticket.ts';

/** The task a chat message asks for: DECISIONS.md defaults of the chat webhook. */
export interface ChatTask {
  title: string;
  description: string;
  role: 'backend';
  priority: 1;
  scope: 'small';
  chat_context: Record<string, string>;
}

export const CHAT_TITLE_MAX = 60;

function chatTask(text: string, context: Record<string, string | undefined>): ChatTask {
  const chat_context = Object.fromEntries(Object.entries(context).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  return { title: cut(text, CHAT_TITLE_MAX), description: text, role: 'backend', priority: 1, scope: 'small', chat_context };
}

/** A URL-encoded form body, first value of each field, blank values kept. */
export function parseForm(raw: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) if (!(k in out)) out[k] = v;
  return out;
}

/** What a slash command does: a task to create (deduplicated by `key`), or the answer for an empty text. */
export type CommandPlan =
  | { kind: 'create'; task: ChatTask; key: string | null }
  | { kind: 'empty'; answer: string };

/** The plan of a slash command form. */
export function commandPlan(form: Record<string, string>): CommandPlan {
  const text = (form.text ?? '').trim();
  if (!text) return { kind: 'empty', answer: `Received \`${form.command ?? ''}\` - no task text provided.` };
  const task = chatTask(text, { channel_id: form.channel_id, user_id: form.user_id, thread_ts: form.thread_ts, response_url: form.response_url });
  // The platform gives every invocation its own trigger id; a retry of the same post carries the same one.
  return { kind: 'create', task, key: form.trigger_id ? `command:${form.trigger_id}` : null };
}

/** The ephemeral answer of a slash command. */
export const createdAnswer = (id: string, title: string): string => `Task \`${id}\` created: ${title}`;
export const queuedAnswer = (title: string): string => `Task queued: ${title} (it is on the board in a moment)`;

/** What an Events API delivery does. */
export type EventPlan =
  | { kind: 'bad' }
  | { kind: 'challenge'; challenge: string }
  | { kind: 'ignore' }
  | { kind: 'create'; task: ChatTask; key: string | null };

const IGNORED_SUBTYPES = new Set(['bot_message', 'message_changed', 'message_deleted']);

/** `<@U123>` and `<@U123|name>` mentions of one user. */
const mentionOf = (id: string) => new RegExp(`<@${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\|[^>]*)?>`, 'g');

/** The plan of an Events API body (already parsed JSON); `botUserId` gates and strips mentions when set. */
export function eventPlan(body: unknown, botUserId: string | undefined): EventPlan {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { kind: 'bad' };
  const b = body as Record<string, unknown>;
  const ev = b.event;
  if (ev !== undefined && (!ev || typeof ev !== 'object' || Array.isArray(ev))) return { kind: 'bad' };
  if (b.type === 'url_verification') return { kind: 'challenge', challenge: typeof b.challenge === 'string' ? b.challenge : '' };
  if (b.type !== 'event_callback' || !ev) return { kind: 'ignore' };
  const e = ev as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (e.type !== 'message' || IGNORED_SUBTYPES.has(s(e.subtype) ?? '') || e.bot_id) return { kind: 'ignore' };
  let text = s(e.text) ?? '';
  if (botUserId) {
    const mention = mentionOf(botUserId);
    if (!mention.test(text)) return { kind: 'ignore' };
    text = text.replace(mentionOf(botUserId), ' ');
  }
  text = text.replace(/[ \t]{2,}/g, ' ').trim();
  if (!text) return { kind: 'ignore' };
  const channel = s(e.channel), user = s(e.user), thread = s(e.thread_ts) ?? s(e.ts);
  // The event's own keys (channel, user) and the slash command's (channel_id, user_id) both, for either reader.
  const task = chatTask(text, { channel, user, thread_ts: thread, channel_id: channel, user_id: user });
  const key = s(b.event_id) ? `event:${s(b.event_id)}` : channel && s(e.ts) ? `message:${channel}:${s(e.ts)}` : null;
  return { kind: 'create', task, key };
}
