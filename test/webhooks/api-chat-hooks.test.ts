// Chat commands and events, POST /webhook and POST /hooks/{session_id} through a real `svc up`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { chatHeaders, hookHeaders, webhookHeaders } from './support.ts';

const T = suite('webhooks: chat, /webhook and /hooks over HTTP');
const CHAT = 'chat-signing-secret';
const SID = 'backend-0badcafe';
let repo: TempRepo;
let s: RunningServer;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

T.before(async () => {
  repo = makeRepo('svc-chat-');
  mkdirSync(join(repo.dir, '.sdd', 'runtime', 'logs'), { recursive: true });
  writeFileSync(join(repo.dir, '.sdd', 'runtime', 'logs', `${SID}.log`), 'agent started\n');
  // A session svc started leaves who owns its log (its task and tenant), which the stream checks.
  writeFileSync(join(repo.dir, '.sdd', 'runtime', 'logs', `${SID}.owner.json`), JSON.stringify({ session_id: SID, task_id: '01m8aaaaaaaaaaaaaaaaaaaaaa', tenant: 'default' }));
  s = await startServer(repo.dir, {
    args: ['--no-orchestrator'],
    env: { SERVICE_CHAT_SIGNING_SECRET: CHAT, SERVICE_CHAT_BOT_USER_ID: 'UBOT', SERVICE_WEBHOOK_SECRET: 'wh-secret', SERVICE_HOOK_SECRET: 'hook-secret' },
  });
});
T.after(async () => { await s.stop(); repo.cleanup(); });

const post = async (path: string, body: string, headers: Record<string, string>) => {
  const r = await fetch(s.url + path, { method: 'POST', headers, body });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
};
// Open ones only: the load test's tasks are done, and would crowd chat tasks out of a page.
const chatTasks = async () => ((await s.api('GET', '/tasks?status=open&limit=500')).body.tasks as any[]).filter((t) => t.chat_context);
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

T('a slash command creates one task with the chat defaults and answers with its id', async () => {
  const text = 'Make the checkout page survive an empty cart and show a friendly message instead of the error page';
  const body = form({ command: '/svc', text, user_id: 'U1', channel_id: 'C1', response_url: 'https://chat.example/r/1', trigger_id: 'tr-1', thread_ts: '171.5' });
  const r = await post('/webhooks/chat/commands', body, chatHeaders(CHAT, body));
  assert.is(r.status, 200);
  const [task] = await chatTasks();
  assert.equal(r.body, { response_type: 'ephemeral', text: `Task \`${task.id}\` created: ${text.slice(0, 60)}` });
  assert.equal([task.title, task.description, task.role, task.priority, task.scope], [text.slice(0, 60), text, 'backend', 1, 'small']);
  assert.equal(task.chat_context, { channel_id: 'C1', user_id: 'U1', thread_ts: '171.5', response_url: 'https://chat.example/r/1' });
  // The platform retries (new timestamp, same body): the same answer, no second task.
  const retry = await post('/webhooks/chat/commands', body, { ...chatHeaders(CHAT, body, Math.floor(Date.now() / 1000) - 5), 'x-slack-retry-num': '1' });
  assert.equal(retry.body, r.body);
  assert.is((await chatTasks()).length, 1);
});

T('an empty command text creates nothing; bad, stale and future-dated signatures answer 401', async () => {
  const empty = form({ command: '/svc', text: '  ', user_id: 'U1' });
  assert.equal((await post('/webhooks/chat/commands', empty, chatHeaders(CHAT, empty))).body, { response_type: 'ephemeral', text: 'Received `/svc` - no task text provided.' });
  const body = form({ command: '/svc', text: 'never created', trigger_id: 'tr-x' });
  const now = Math.floor(Date.now() / 1000);
  for (const h of [chatHeaders('wrong', body), chatHeaders(CHAT, body, now - 400), chatHeaders(CHAT, body, now + 400), { ...chatHeaders(CHAT, body), 'x-chat-signature': 'v0=abc' }, {}]) {
    const r = await post('/webhooks/chat/commands', body, h);
    assert.equal([r.status, r.body.detail], [401, 'Invalid chat signature']);
  }
  // The platform's native header names are accepted too.
  const native = chatHeaders(CHAT, body);
  const r = await post('/webhooks/chat/commands', body, { 'x-slack-request-timestamp': native['x-chat-request-timestamp']!, 'x-slack-signature': native['x-chat-signature']! });
  assert.match(r.body.text, /^Task `[0-9a-z]+` created: never created$/);
});

T('events: url_verification echoes; a mention becomes a task without the mention; bots, edits and unmentioned messages do nothing', async () => {
  const signed = (o: unknown) => { const b = JSON.stringify(o); return post('/webhooks/chat/events', b, chatHeaders(CHAT, b, undefined, 'application/json')); };
  assert.equal((await signed({ type: 'url_verification', challenge: 'ch-42' })).body, { challenge: 'ch-42' });
  const msg = (event: Record<string, unknown>, id: string) => signed({ type: 'event_callback', event_id: id, event: { type: 'message', channel: 'C9', user: 'U9', ts: '100.1', ...event } });
  const before = (await chatTasks()).length;
  assert.equal((await msg({ text: '<@UBOT>   deploy the docs site' }, 'Ev1')).body, { ok: true });
  assert.equal((await msg({ text: '<@UBOT> deploy the docs site' }, 'Ev1')).body, { ok: true }, 'a retry of the same event');
  await msg({ text: 'no mention here' }, 'Ev2');
  await msg({ text: '<@UBOT> from a bot', bot_id: 'B1' }, 'Ev3');
  await msg({ text: '<@UBOT> edited', subtype: 'message_changed' }, 'Ev4');
  await msg({ text: '<@UBOT> bot subtype', subtype: 'bot_message' }, 'Ev5');
  let created: any[] = [];
  for (let i = 0; i < 100 && created.length === 0; i++) { created = (await chatTasks()).slice(before); await sleep(30); }
  await sleep(200);
  created = (await chatTasks()).slice(before);
  assert.equal(created.map((t) => [t.title, t.chat_context.channel, t.chat_context.user, t.chat_context.thread_ts]), [['deploy the docs site', 'C9', 'U9', '100.1']]);
});

T('events shape checks: unparseable, non-object body or event → 400; no event member → 200', async () => {
  for (const b of ['{not json', '[1,2]', '"text"', JSON.stringify({ type: 'event_callback', event: 'message' }), JSON.stringify({ type: 'event_callback', event: [1] })]) {
    const r = await post('/webhooks/chat/events', b, chatHeaders(CHAT, b, undefined, 'application/json'));
    assert.equal([r.status, r.body], [400, { detail: 'Bad events payload' }], b);
  }
  const none = JSON.stringify({ type: 'app_rate_limited' });
  assert.equal((await post('/webhooks/chat/events', none, chatHeaders(CHAT, none, undefined, 'application/json'))).body, { ok: true });
});

T('a slash command answers within 3 s while 32 clients hammer the task API, and its task is created once', async () => {
  let stop = false;
  const client = async () => {
    while (!stop) {
      const t = await s.api('POST', '/tasks', { title: `load ${Math.random()}`, role: 'load' });
      if (t.status === 201) await s.api('POST', `/tasks/${t.body.id}/complete`, { result_summary: 'ok' });
    }
  };
  const clients = Array.from({ length: 32 }, client);
  await sleep(1500);
  const body = form({ command: '/svc', text: 'answer me quickly', user_id: 'U7', channel_id: 'C7', trigger_id: 'tr-load' });
  const t0 = performance.now();
  const r = await post('/webhooks/chat/commands', body, chatHeaders(CHAT, body));
  const ms = performance.now() - t0;
  await sleep(500);
  stop = true;
  await Promise.all(clients);
  assert.is(r.status, 200);
  assert.ok(ms < 3000, `answered in ${Math.round(ms)} ms`);
  assert.match(r.body.text, /answer me quickly/);
  let mine: any[] = [];
  for (let i = 0; i < 100 && mine.length === 0; i++) { mine = (await chatTasks()).filter((t) => t.title === 'answer me quickly'); await sleep(50); }
  assert.is(mine.length, 1);
});

T('/webhook: a signed TaskCreate → 201 with the task; bad or stale signatures 401 before the body is read; a bad body 422', async () => {
  const body = JSON.stringify({ title: 'from a signed webhook', description: 'd', priority: 3 });
  const r = await post('/webhook', body, webhookHeaders('wh-secret', body));
  assert.is(r.status, 201);
  assert.equal([r.body.title, r.body.role, r.body.priority, r.body.status, r.body.tenant], ['from a signed webhook', 'backend', 3, 'open', 'default']);
  assert.is((await s.api('GET', `/tasks/${r.body.id}`)).body.title, 'from a signed webhook');
  const now = Math.floor(Date.now() / 1000);
  const refusals: [Record<string, string>, string][] = [
    [webhookHeaders('wrong', body), 'Invalid webhook signature'],
    [webhookHeaders('wh-secret', body, now - 400), 'Stale or future-dated X-Timestamp header'],
    [webhookHeaders('wh-secret', body, now + 400), 'Stale or future-dated X-Timestamp header'],
    [{ ...webhookHeaders('wh-secret', body), 'x-timestamp': 'soon' }, 'Missing or malformed X-Timestamp header'],
    [{ 'content-type': 'application/json', authorization: `Bearer ${s.token}` }, 'Missing or malformed X-Timestamp header'],
  ];
  for (const [h, detail] of refusals) assert.equal(await post('/webhook', body, h), { status: 401, body: { detail } });
  const bad = JSON.stringify({ description: 'no title' });
  assert.equal((await post('/webhook', bad, webhookHeaders('wrong', bad))).status, 401);
  const invalid = await post('/webhook', bad, webhookHeaders('wh-secret', bad));
  assert.equal([invalid.status, invalid.body.detail[0].loc], [422, ['body', 'title']]);
});

T('/hooks/{session_id}: the event is appended to the session log and shows on its SSE stream; unknown session 404', async () => {
  const lines: string[] = [];
  const es = new EventSource(`${s.url}/agents/${SID}/stream`, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${s.token}` } }),
  });
  es.addEventListener('log', (e) => lines.push(JSON.parse(e.data).line));
  for (let i = 0; i < 100 && !lines.includes('agent started'); i++) await sleep(20);
  const body = JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'npm test' } });
  assert.equal(await post(`/hooks/${SID}`, body, hookHeaders('hook-secret', body)), { status: 200, body: { status: 'ok', action: 'tool_use_logged' } });
  const stop = JSON.stringify({ hook_event_name: 'Stop' });
  assert.equal((await post(`/hooks/${SID}`, stop, hookHeaders('hook-secret', stop))).body.action, 'stop_logged');
  for (let i = 0; i < 100 && lines.length < 3; i++) await sleep(20);
  es.close();
  assert.equal(lines, ['agent started', '[hook] PostToolUse Bash: {"command":"npm test"}', '[hook] Stop']);
  assert.match(readFileSync(join(repo.dir, '.sdd', 'runtime', 'logs', `${SID}.log`), 'utf8'), /\[hook\] Stop\n$/);
  assert.is((await post('/hooks/backend-00000000', stop, hookHeaders('hook-secret', stop))).status, 404);
  assert.is((await post('/hooks/..%2Fetc', stop, hookHeaders('hook-secret', stop))).status, 404);
  assert.is((await post(`/hooks/${SID}`, stop, hookHeaders('wrong', stop))).status, 401);
  assert.is((await post(`/hooks/${SID}`, '[1]', hookHeaders('hook-secret', '[1]'))).status, 400);
});

T.run();
