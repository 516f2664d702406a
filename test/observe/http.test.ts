// Observability over HTTP against a real `svc up`: /status and its cache figures, /slo, /dashboard/data,
// /events (live, resumed with Last-Event-ID, reset when too old, pings, freed on disconnect, per tenant),
// exports (CSV parsed by a real CSV parser, JSONL, JSON; filters; streamed; audited), the board's files.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';
import { openEvents } from '../helpers/sse-client.ts';

const T = suite('observe: status, slo, dashboard, events, exports over HTTP');
let repo: TempRepo;
let s: RunningServer;
T.before(async () => {
  repo = makeRepo('svc-observe-');
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), 'observe:\n  budget_usd: 50\n  events:\n    ring_size: 16\n    ping_ms: 200\ntenants:\n  default_max_tasks: 10000\n');
  writeFileSync(join(repo.dir, '.sdd', 'tenants.json'), JSON.stringify({ default: {}, blue: { max_tasks: 100 } }));
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
T.after(async () => { await s?.stop(); repo?.cleanup(); });

const metric = async (name: string): Promise<number> => {
  const text = String((await s.api('GET', '/metrics')).body);
  return [...text.matchAll(new RegExp(`^${name.replace(/[{}"=]/g, (c) => `\\${c}`)} (\\S+)$`, 'gm'))].reduce((a, m) => a + Number(m[1]), 0);
};
const create = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const r = await s.api('POST', '/tasks', body, headers);
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body as { id: string; version: number; tenant: string };
};

T('/status: counts per status, total, agents, cost, per role, summary, uptime, version; cache_hit_rate from real counters', async () => {
  const a = await create({ title: 'status one', role: 'qa' });
  await create({ title: 'status two' });
  await s.api('POST', `/tasks/${a.id}/claim`, {});
  for (let i = 0; i < 5; i++) assert.is((await s.api('GET', '/status')).status, 200);
  await create({ title: 'a change: the next /status is computed afresh' });
  const st = (await s.api('GET', '/status')).body;
  for (const k of ['open', 'claimed', 'in_progress', 'done', 'failed', 'closed', 'blocked', 'waiting_for_subtasks', 'refused', 'cancelled', 'total', 'agents', 'cost_usd', 'uptime_s', 'version']) assert.ok(k in st, `has ${k}`);
  assert.equal([st.open, st.claimed, st.total, st.agents], [2, 1, 3, 0]);
  assert.equal(st.agents_sandbox.mode, 'none', 'no orchestrator: no agents, said so');
  assert.equal(st.per_role.map((r: { role: string; total: number }) => [r.role, r.total]), [['backend', 2], ['qa', 1]]);
  assert.equal(Object.keys(st.summary), ['total', 'open', 'claimed', 'done', 'failed', 'agents', 'cost_usd', 'max_agents']);
  const m = st.metrics;
  assert.ok(m.cache_hits >= 3, `repeated reads of an unchanged board are hits (${JSON.stringify(m)})`);
  assert.is(m.cache_lookups, m.cache_hits + m.cache_misses);
  assert.is(m.cache_hit_rate, Math.round((m.cache_hits / m.cache_lookups) * 10_000) / 10_000);
  assert.ok(await metric('svc_read_cache_requests_total{result="hit"}') >= m.cache_hits, 'the same counters as /metrics');
  assert.is((await s.api('GET', '/status', undefined, { authorization: '' })).status, 401, 'auth-gated');
});

T('/slo: targets from config, current and met per SLO, the error budget of task success', async () => {
  const done = await create({ title: 'slo done' });
  await s.api('POST', `/tasks/${done.id}/complete`, { result_summary: 'ok' });
  const failed = await create({ title: 'slo failed' });
  await s.api('POST', `/tasks/${failed.id}/fail`, { reason: 'broken' });
  const r = (await s.api('GET', '/slo')).body;
  const task = r.slos.find((x: { name: string }) => x.name === 'task_success');
  assert.equal([task.target, task.current, task.samples, task.met, task.status], [0.9, 0.5, 2, false, 'breached']);
  assert.equal(r.slos.map((x: { name: string }) => x.name), ['task_success', 'merge_success', 'gate_pass', 'run_p95_s']);
  assert.equal([r.error_budget.total_tasks, r.error_budget.failed_tasks, r.error_budget.is_depleted, r.error_budget.status], [2, 1, true, 'exhausted']);
});

T('/dashboard/data: stats, cards with live progress, live costs against observe.budget_usd, alerts, who you are, seq', async () => {
  const t = await create({ title: 'dashboard progress' });
  await s.api('POST', `/tasks/${t.id}/claim`, {});
  assert.is((await s.api('POST', `/tasks/${t.id}/progress`, { message: 'half way', percent: 50 })).status, 200);
  const d = (await s.api('GET', '/dashboard/data')).body;
  const card = d.tasks.find((c: { id: string }) => c.id === t.id);
  assert.equal([card.status, card.progress, card.progress_message], ['in_progress', 50, 'half way']);
  assert.equal(d.live_costs, { spent_usd: 0, budget_usd: 50, percentage_used: 0, should_warn: false, should_stop: false });
  assert.ok(d.alerts.some((a: { message: string }) => /failed task/.test(a.message)));
  assert.equal(d.you, { actor: 'env', role: 'admin', tenant: 'default', signed_in: false });
  assert.ok(Number.isSafeInteger(d.seq) && d.seq > 0);
  const only = (await s.api('GET', '/dashboard/data?status=in_progress')).body;
  assert.equal(only.tasks.map((c: { id: string }) => c.id), [t.id]);
});

T('/events: live changes after the dashboard\'s seq, a resume with Last-Event-ID gets exactly the missed ones, an old id a reset, pings', async () => {
  const { seq } = (await s.api('GET', '/dashboard/data')).body;
  const auth = { authorization: `Bearer ${s.token}` };
  const a = await openEvents(`${s.url}/events`, { ...auth, 'last-event-id': String(seq) });
  assert.is(a.status, 200);
  const t = await create({ title: 'seen live' });
  const created = await a.next((f) => f.event === 'task_created');
  assert.equal(JSON.parse(created.data).id, t.id);
  assert.is(Number(created.id), seq + 1, 'ids are the board\'s change sequence');
  assert.equal([JSON.parse(created.data).status, JSON.parse(created.data).version], ['open', 1]);
  await a.next((f) => f.comment === 'ping');
  a.close();
  await s.api('POST', `/tasks/${t.id}/claim`, {});
  await s.api('POST', `/tasks/${t.id}/release`, {});
  const b = await openEvents(`${s.url}/events`, { ...auth, 'last-event-id': created.id! });
  const second = await b.next((f) => f.event === 'task_updated' && JSON.parse(f.data).status === 'open');
  const replayed = b.frames.filter((f) => f.id !== null).map((f) => [f.event, JSON.parse(f.data).status]);
  assert.equal(replayed, [['task_updated', 'claimed'], ['task_updated', 'open']], 'exactly the two missed changes, in order');
  assert.is(Number(second.id), seq + 3);
  b.close();
  for (let i = 0; i < 20; i++) await create({ title: `push the ring ${i}` });
  const c = await openEvents(`${s.url}/events?last_event_id=${seq}`, auth);
  const reset = await c.next((f) => f.event === 'reset');
  assert.ok(Number(reset.id) >= seq + 23, 'a reset carries the current sequence: fetch /dashboard/data and resume from it');
  c.close();
});

T('/events: each client sees its tenant only; every stream is freed when its client goes away', async () => {
  // The streams of the test before are closed; wait until the server saw them go.
  for (let i = 0; i < 100 && (await metric('svc_events_clients')) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
  const before = await metric('svc_events_clients');
  assert.is(before, 0, 'streams of closed clients are freed');
  const auth = { authorization: `Bearer ${s.token}` };
  const blue = await openEvents(`${s.url}/events`, { ...auth, 'x-tenant-id': 'blue' });
  const def = await openEvents(`${s.url}/events`, auth);
  assert.is(await metric('svc_events_clients'), before + 2);
  const bt = await create({ title: 'blue task' }, { 'x-tenant-id': 'blue' });
  const dt = await create({ title: 'default task' });
  await blue.next((f) => f.event === 'task_created');
  await def.next((f) => f.event === 'task_created' && JSON.parse(f.data).id === dt.id);
  assert.equal(blue.frames.filter((f) => f.event === 'task_created').map((f) => JSON.parse(f.data).id), [bt.id]);
  assert.not.ok(def.frames.some((f) => f.data.includes(bt.id)));
  blue.close();
  def.close();
  for (let i = 0; i < 50 && (await metric('svc_events_clients')) !== before; i++) await new Promise((r) => setTimeout(r, 50));
  assert.is(await metric('svc_events_clients'), before, 'no subscriber left behind');
});

T('exports: CSV with a header parsed by a real CSV parser, JSONL, JSON; filters; streamed; audited; 422 on a bad format, 403 for viewers', async () => {
  const tricky = await create({ title: 'comma, "quote" and\nnewline', role: 'docs', description: '=SUM(A1:A2)' });
  const csv = await fetch(`${s.url}/export/tasks`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'csv', role: ['docs'] }) });
  assert.is(csv.status, 200);
  assert.match(csv.headers.get('content-type')!, /^text\/csv/);
  assert.match(csv.headers.get('content-disposition')!, /attachment; filename="svc-tasks-\d{8}T\d{6}Z\.csv"/);
  const rows = parseCsv(await csv.text(), { columns: true }) as Record<string, string>[];
  assert.is(rows.length, 1);
  assert.equal([rows[0]!.id, rows[0]!.title, rows[0]!.role, rows[0]!.description], [tricky.id, 'comma, "quote" and\nnewline', 'docs', "'=SUM(A1:A2)"]);
  const jsonl = String((await s.api('POST', '/export/tasks', { format: 'jsonl', status: ['open'] })).body).trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(jsonl.length > 5 && jsonl.every((t) => t.status === 'open' && typeof t.version === 'number'));
  const json = await s.api('POST', '/export/tasks?format=json', {});
  assert.ok(Array.isArray(json.body) && json.body.length === (await s.api('GET', '/tasks/counts')).body.total);
  assert.is((await s.api('POST', '/export/tasks', { format: 'xml' })).status, 422);
  assert.is((await s.api('POST', '/export/agents', { format: 'csv' })).status, 200);
  const viewer = await runCli(['token', 'create', '--role', 'viewer'], { cwd: repo.dir });
  const vt = /\b([A-Za-z0-9_-]{30,})\b/.exec(viewer.stdout)?.[1];
  assert.ok(vt, viewer.stdout + viewer.stderr);
  assert.is((await s.api('POST', '/export/tasks', {}, { authorization: `Bearer ${vt}` })).status, 403);

  // A large board streams: chunked, one header and one row per task.
  await s.api('POST', '/tasks/batch', { tasks: Array.from({ length: 1000 }, (_, i) => ({ title: `bulk ${i}`, role: 'bulk' })) });
  const big = await fetch(`${s.url}/export/tasks`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'csv', role: ['bulk'] }) });
  assert.is(big.headers.get('transfer-encoding'), 'chunked');
  assert.is((parseCsv(await big.text(), { columns: true }) as unknown[]).length, 1000);
  await s.settled();
  const audit = readdirSync(join(repo.dir, '.sdd', 'audit')).filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(repo.dir, '.sdd', 'audit', f), 'utf8').trim().split('\n').map((l) => JSON.parse(l)));
  const exports = audit.filter((r) => r.action === 'export.tasks');
  assert.ok(exports.some((r) => r.details.format === 'csv' && r.details.rows === 1000 && r.details.filters.role[0] === 'bulk' && r.actor === 'env'), 'each export is in the audit log with its filters and row count');
  assert.ok(audit.some((r) => r.action === 'export.agents'));
});

T('/grafana/dashboard is a download; /tasks/{id}/history answers 404 for an unknown task; /board serves only its own files, under a CSP', async () => {
  const g = await s.api('GET', '/grafana/dashboard?datasource=Mimir');
  assert.match(g.headers.get('content-disposition')!, /svc-dashboard\.json/);
  assert.is(g.body.dashboard.templating.list[0].current.value, 'Mimir');
  assert.is((await s.api('GET', '/tasks/01nosuchtask0000000000000a/history')).status, 404);
  const page = await fetch(`${s.url}/board`);
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
  assert.match(await page.text(), /<script type="module" src="\/board\/app\.js">/);
  assert.is((await fetch(`${s.url}/board/app.js`)).headers.get('content-type'), 'text/javascript; charset=utf-8');
  for (const p of ['/board/..%2Fpackage.json', '/board/nope.js', '/board/index.html%00']) assert.is((await fetch(`${s.url}${p}`)).status, 404, p);
});

T('/metrics: tasks per status and role and the claimable queue per role follow claims, completions and dependencies', async () => {
  const first = await create({ title: 'queue first', role: 'mq-a' });
  const second = await create({ title: 'queue second', role: 'mq-a' });
  const after = await create({ title: 'queue after the first', role: 'mq-a', depends_on: [first.id] });
  const lone = await create({ title: 'queue lone', role: 'mq-b' });
  const state = async () => [
    await metric('svc_tasks{status="open",role="mq-a"}'), await metric('svc_tasks{status="claimed",role="mq-a"}'),
    await metric('svc_task_queue_depth{role="mq-a"}'), await metric('svc_task_queue_depth{role="mq-b"}'),
  ];
  assert.equal(await state(), [3, 0, 2, 1], 'the task waiting for its dependency is on the board, not claimable');
  assert.is((await s.api('POST', `/tasks/${first.id}/claim`, {})).status, 200);
  assert.equal(await state(), [2, 1, 1, 1]);
  assert.is((await s.api('POST', `/tasks/${first.id}/complete`, { result_summary: 'ok' })).status, 200);
  assert.equal(await state(), [2, 0, 2, 1], 'its dependency done: the third task is claimable');
  assert.is((await s.api('POST', `/tasks/${lone.id}/claim`, {})).status, 200);
  assert.is((await s.api('POST', `/tasks/${lone.id}/complete`, { result_summary: 'ok' })).status, 200);
  const text = String((await s.api('GET', '/metrics')).body);
  assert.match(text, /^svc_task_queue_depth\{role="mq-b"\} 0$/m, 'a role still on the board keeps a zero series');
  assert.not.match(text, /^svc_tasks\{status="open",role="mq-b"\}/m, 'no series for a status no task of the role has');
  assert.match(text, /^svc_tasks\{status="done",role="mq-b"\} 1$/m);
  for (const id of [second.id, after.id]) assert.is((await s.api('POST', `/tasks/${id}/claim`, {})).status, 200);
  assert.equal(await state(), [0, 2, 0, 0]);
});

T.run();
