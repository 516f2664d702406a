// Tracker webhooks through a real `svc up`: statuses, one task per ticket, exactly once, replay across a restart,
// config reload, the startup poll against a fake tracker, metrics.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeIssues, startFakeTracker, type FakeTracker } from '../helpers/fake-trackers.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { CASES, delivery, secretEnv, send } from './support.ts';

const T = suite('webhooks: trackers over HTTP');
let repo: TempRepo;
let s: RunningServer;
let fake: FakeTracker;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const env = { ...secretEnv(), GH_TOKEN: 'gh-api-token' };

function writeConfig(jira: string): void {
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), [
    'orchestrator:', '  tick_ms: 100', '  max_agents: 0',
    'trackers:',
    '  github:', '    webhook: { enabled: true, secret_env: GH_SECRET }',
    `    poll: { enabled: true, api_url: "${fake.url}", project: octo/app, token_env: GH_TOKEN, deadline_s: 20 }`,
    '  gitlab:', '    webhook: { enabled: true, secret_env: GL_TOKEN }',
    '  linear:', '    webhook: { enabled: true, secret_env: LIN_SECRET }',
    '  tracker_e:', '    webhook: { enabled: true, secret_env: PLANE_SECRET }',
    `  jira:`, `    webhook: ${jira}`, '',
  ].join('\n'));
}
const tasksOf = async (adapter: string) => ((await s.api('GET', '/tasks?limit=500')).body.tasks as any[]).filter((t) => t.metadata?.ticket?.adapter === adapter);
async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

T.before(async () => {
  repo = makeRepo('svc-hooks-');
  fake = await startFakeTracker({ kind: 'tracker_b', issues: fakeIssues(9, Date.now() - 3_600_000, [5]), pageSize: 4 });
  writeFileSync(join(repo.dir, '.gitignore'), '');
  repo.git('commit', '-qm', 'x', '--allow-empty');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  writeConfig('{ enabled: false, secret_env: JIRA_SECRET }');
  s = await startServer(repo.dir, { env });
});
T.after(async () => { await s.stop(); await fake.close(); repo.cleanup(); });

T('the startup poll created one task per open ticket of the fake tracker and wrote its watermark', async () => {
  const polled = await until('8 polled tasks', async () => { const l = await tasksOf('tracker_b'); return l.length === 8 && l; });
  assert.equal(polled.map((t) => t.title).sort(), ['Issue 1', 'Issue 2', 'Issue 3', 'Issue 4', 'Issue 6', 'Issue 7', 'Issue 8', 'Issue 9'].map((x) => `octo/app#${x.slice(6)}: ${x}`).sort());
  assert.is(polled.find((t) => t.title.endsWith('Issue 1'))!.role, 'qa', 'role:qa label');
  assert.equal(fake.requests.map((r) => [r.page, r.query.state]), [[1, 'open'], [2, 'open']]);
  // The watermark is written after the poll's last task: wait for its whole line.
  const file = join(repo.dir, '.sdd', 'runtime', 'poll_watermarks.jsonl');
  const text = await until('the watermark line', async () => { try { const t = readFileSync(file, 'utf8'); return t.endsWith('\n') && t; } catch { return undefined; } });
  const marks = text.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(marks.map((m) => m.source), ['tracker_b']);
});

for (const adapter of ['tracker_b', 'tracker_c', 'tracker_d', 'tracker_e']) {
  T(`${adapter}: opened → task, replay → nothing, edited → title, labelled → role, closed → cancelled, reopened → a new task`, async () => {
    const files = CASES.filter((c) => c.adapter === adapter && c.expect).map((c) => c.file);
    const ticketId = CASES.find((c) => c.file === files[0])!.expect!.ticket.id;
    const mine = async () => (await tasksOf(adapter)).filter((t) => t.metadata.ticket.id === ticketId);
    const step = async (kind: string) => (await send(s.url, delivery(files.find((f) => f.includes(kind))!))).body;
    const opened = await step(adapter === 'tracker_c' ? 'issue-open' : adapter === 'tracker_b' ? 'opened' : 'create');
    assert.equal([opened.status, opened.outcome], ['accepted', 'created']);
    assert.match(opened.delivery_id, new RegExp(`^${adapter}:`));
    const again = await send(s.url, delivery(files[0]!));
    assert.equal(again, { status: 200, body: { status: 'replay', delivery_id: opened.delivery_id } });
    let [task] = await mine();
    assert.equal([task.status, task.metadata.ticket.adapter], ['open', adapter]);
    const edited = await step(adapter === 'tracker_c' ? 'issue-update' : adapter === 'tracker_b' ? 'edited' : adapter === 'tracker_d' ? 'issue-update' : 'issue-updated');
    assert.equal([edited.outcome, edited.task_id], ['updated', task.id]);
    const expected = CASES.find((c) => c.file === files.find((f) => f.includes(adapter === 'tracker_b' ? 'edited' : 'upd'))!)!.expect!.ticket.title as string;
    [task] = await mine();
    assert.ok(task.title.endsWith(expected), `${task.title} ends with ${expected}`);
    const role = task.role;
    const labelled = await step(adapter === 'tracker_b' ? 'labeled' : 'labels');
    assert.is(labelled.outcome, 'updated');
    [task] = await mine();
    assert.not.equal(task.role, role, 'a role:<name> label moved the role');
    const closed = await step(adapter === 'tracker_b' ? 'closed' : adapter === 'tracker_c' ? 'close' : 'completed');
    assert.equal([closed.outcome, (await s.api('GET', `/tasks/${task.id}`)).body.status], ['cancelled', 'cancelled']);
    const reopened = await step('reopen');
    assert.is(reopened.outcome, 'created');
    const all = await mine();
    assert.equal(all.map((t) => t.status).sort(), ['cancelled', 'open']);
  });
}

T('50 concurrent copies of one delivery create exactly one task', async () => {
  const d = delivery('tracker_a/issue-created.json');
  writeConfig('{ enabled: true, secret_env: JIRA_SECRET }');
  await until('jira enabled by the config reload', async () => (await send(s.url, delivery('tracker_a/comment-created.json'))).status === 200);
  const out = await Promise.all(Array.from({ length: 50 }, () => send(s.url, d)));
  assert.equal(out.filter((r) => r.body.status === 'accepted').length, 1);
  assert.equal(out.filter((r) => r.body.status === 'replay').length, 49);
  assert.is((await tasksOf('tracker_a')).length, 1);
});

T('refusals: unknown adapter 404, disabled or empty secret 503, bad signature or a bearer token alone 401, not JSON 400 (and not remembered)', async () => {
  assert.is((await send(s.url, delivery('tracker_b/issues-opened.json'), 'bitbucket')).status, 404);
  const bad = delivery('tracker_b/issues-opened.json', { deliveryId: 'forged' });
  bad.headers['x-hub-signature-256'] = `sha256=${'0'.repeat(64)}`;
  assert.equal(await send(s.url, bad), { status: 401, body: { status: 'bad_signature', delivery_id: null, detail: 'Invalid webhook signature' } });
  const bearer = await fetch(`${s.url}/webhooks/trackers/github`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: '{}' });
  assert.is(bearer.status, 401);
  const notJson = delivery('tracker_b/issues-opened.json', { deliveryId: 'nj-1', raw: Buffer.from('not json') });
  assert.equal((await send(s.url, notJson)).status, 400);
  const retried = await send(s.url, delivery('tracker_b/issues-edited.json', { deliveryId: 'nj-1' }));
  assert.equal([retried.status, retried.body.status], [200, 'accepted']);
  writeConfig('{ enabled: true, secret_env: UNSET_SECRET_VAR }');
  const noSecret = await until('the empty secret to apply', async () => { const r = await send(s.url, delivery('tracker_a/issue-updated.json')); return r.status === 503 && r; });
  assert.is(noSecret.body.status, 'not_configured');
  writeConfig('{ enabled: false, secret_env: JIRA_SECRET }');
  const off = await until('the disable to apply', async () => { const r = await send(s.url, delivery('tracker_a/issue-updated.json')); return r.body.status === 'disabled' && r; });
  assert.is(off.status, 503);
});

T('a ticket closed while its task is claimed is only noted; the canonical name reaches the same receiver', async () => {
  const [task] = (await tasksOf('tracker_b')).filter((t) => t.title.endsWith('Issue 2'));
  assert.is((await s.api('POST', `/tasks/${task.id}/claim`)).status, 200);
  const body = JSON.parse(readFileSync(join(process.cwd(), 'fixtures/webhooks/tracker_b/issues-closed.json'), 'utf8'));
  body.issue = { ...body.issue, id: 20002, number: 2, title: 'Issue 2', html_url: 'https://github.example/octo/app/issues/2' };
  const r = await send(s.url, delivery('tracker_b/issues-closed.json', { deliveryId: 'close-2', raw: Buffer.from(JSON.stringify(body)) }), 'tracker_b');
  assert.equal([r.status, r.body.outcome, r.body.task_id], [200, 'noted', task.id]);
  assert.is((await s.api('GET', `/tasks/${task.id}`)).body.status, 'claimed');
});

T('per-adapter counters on /metrics', async () => {
  const text = (await s.api('GET', '/metrics')).body as string;
  for (const line of [
    'svc_webhook_deliveries_accepted_total{adapter="tracker_b"}', 'svc_webhook_deliveries_replayed_total{adapter="tracker_a"} 49',
    'svc_webhook_deliveries_rejected_total{adapter="tracker_b",reason="bad_signature"} 2', 'svc_webhook_deliveries_rejected_total{adapter="tracker_a",reason="disabled"}',
    'svc_webhook_ticket_outcomes_total{adapter="tracker_b",outcome="noted"} 1', 'svc_tracker_polls_total{adapter="tracker_b",result="completed"} 1',
    'svc_tracker_poll_tickets_total{adapter="tracker_b"} 8',
  ]) assert.ok(text.includes(line), line);
});

T('after a restart a delivery seen before answers replay and creates nothing; the poll asks only for changes since its watermark', async () => {
  const before = (await s.api('GET', '/tasks?limit=500')).body.total;
  await s.stop();
  fake.requests.length = 0;
  s = await startServer(repo.dir, { env });
  const r = await send(s.url, delivery('tracker_b/issues-opened.json'));
  assert.equal(r.body.status, 'replay');
  await until('the second startup poll', async () => fake.requests.length > 0);
  await sleep(300);
  assert.ok(fake.requests.every((q) => q.query.state === 'all' && q.query.since), JSON.stringify(fake.requests));
  assert.is((await s.api('GET', '/tasks?limit=500')).body.total, before);
  assert.ok(((await s.api('GET', '/metrics')).body as string).includes('svc_tracker_poll_tickets_total{adapter="tracker_b"} 0'));
});

T('chat routes answer 404 and /webhook, /hooks 503 while their secrets are unset', async () => {
  assert.is((await fetch(`${s.url}/webhooks/chat/commands`, { method: 'POST', body: 'text=x' })).status, 404);
  assert.is((await fetch(`${s.url}/webhooks/chat/events`, { method: 'POST', body: '{}' })).status, 404);
  assert.is((await fetch(`${s.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' })).status, 503);
  assert.is((await fetch(`${s.url}/hooks/backend-1234abcd`, { method: 'POST', body: '{}' })).status, 503);
});

T.run();
