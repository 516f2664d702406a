import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertValidation, boot, sleep, type Api } from './support.ts';

// What clients written for the original server, and people new to svc, run into (issue 11).
let a: Api;
const T = suite('clients of the original server, and request mistakes');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });

const auditLines = (): { action: string; resource_id: string; actor: string }[] =>
  readdirSync(join(a.repo.dir, '.sdd', 'audit')).filter((f) => f.endsWith('.jsonl')).sort()
    .flatMap((f) => readFileSync(join(a.repo.dir, '.sdd', 'audit', f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));

T('complete on an open task claims it for the caller and completes it, one audit entry each', async () => {
  const t = await a.create({ title: 'approve in the editor' });
  const r = await a.verb(t.id, 'complete', { result_summary: 'approved' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.status, r.body.result_summary, r.body.claim_count, r.body.assigned_agent], ['done', 'approved', 1, 'env']);
  assert.is(r.body.branch, null, 'no agent branch: dependents may start at done');
  for (let i = 0; i < 100 && auditLines().filter((l) => l.resource_id === t.id).length < 3; i++) await sleep(20);
  assert.equal(auditLines().filter((l) => l.resource_id === t.id).map((l) => l.action), ['task.create', 'task.claim', 'task.complete']);
  const dependent = await a.create({ title: 'after the approval', depends_on: [t.id] });
  assert.is((await a.s.api('POST', `/tasks/${dependent.id}/claim`)).status, 200, 'a task done by a client satisfies its dependents');
});

T('the status filter orphaned of old clients answers an empty list, not 422', async () => {
  await a.create();
  const flat = await a.s.api('GET', '/tasks?status=orphaned');
  assert.equal([flat.status, flat.body], [200, []]);
  const page = await a.s.api('GET', '/tasks?status=orphaned&limit=10');
  assert.equal([page.status, page.body.tasks, page.body.total], [200, [], 0]);
  const search = await a.s.api('GET', '/tasks/search?status=orphaned');
  assert.equal([search.status, search.body.tasks], [200, []]);
});

T('a 422 for an enum value lists the allowed values', async () => {
  const [issue] = assertValidation(await a.s.api('GET', '/tasks?status=opne'), 'query');
  assert.equal(issue!.loc, ['query', 'status']);
  assert.is(issue!.msg, 'status must be one of open, claimed, in_progress, done, failed, closed, blocked, waiting_for_subtasks, refused, cancelled, orphaned');
  const [scope] = assertValidation(await a.s.api('POST', '/tasks', { title: 'x', scope: 'huge' }), 'body');
  assert.is(scope!.msg, 'scope must be one of small, medium, large');
  const [order] = assertValidation(await a.s.api('GET', '/tasks/search?order=up'), 'query');
  assert.is(order!.msg, 'order must be one of asc, desc');
});

T('unknown top-level keys on create and patch are accepted and named in a Warning header', async () => {
  const r = await a.s.api('POST', '/tasks', { title: 'typo in a key', descripton: 'oops', prio: 1 });
  assert.is(r.status, 201);
  assert.is(r.headers.get('warning'), '299 svc "ignored unknown keys: descripton, prio"');
  assert.is(r.body.description, '');
  const clean = await a.s.api('POST', '/tasks', { title: 'no typo' });
  assert.is(clean.headers.get('warning'), null);
  const batch = await a.s.api('POST', '/tasks/batch', { tasks: [{ title: 'b1', colour: 'red' }] });
  assert.is(batch.headers.get('warning'), '299 svc "ignored unknown keys: tasks[].colour"');
});

T('PATCH changes only role, priority and model: title and depends_on are ignored, so no cycle can be made', async () => {
  const first = await a.create({ title: 'first of a chain' });
  const second = await a.create({ title: 'second of a chain', depends_on: [first.id] });
  const r = await a.s.api('PATCH', `/tasks/${first.id}`, { title: 'renamed', depends_on: [second.id], priority: 5 });
  assert.is(r.status, 200);
  assert.equal([r.body.title, r.body.depends_on, r.body.priority], ['first of a chain', [], 5]);
  assert.is(r.headers.get('warning'), '299 svc "ignored unknown keys: title, depends_on"');
  const graph = await a.s.api('GET', '/tasks/graph');
  assert.ok(graph.body.critical_path.length >= 2, 'the chain is still a chain, not a cycle');
});

T('search finds words in title and description (q=), id prefixes, and non-terminal tasks', async () => {
  const hit = await a.create({ title: 'Rotate the signing keys', description: 'before the audit in March' });
  await a.create({ title: 'Rotate the logs' });
  const gone = await a.create({ title: 'Rotate the tyres', description: 'the audit car' });
  await a.verb(gone.id, 'cancel', {});
  const q = await a.s.api('GET', '/tasks/search?q=' + encodeURIComponent('rotate AUDIT'));
  assert.equal(q.body.tasks.map((t: any) => t.id).sort(), [hit.id, gone.id].sort());
  const live = await a.s.api('GET', '/tasks/search?terminal=false&q=audit');
  assert.equal(live.body.tasks.map((t: any) => t.id), [hit.id]);
  const byPrefix = await a.s.api('GET', `/tasks/search?id_prefix=${hit.id.slice(0, 20)}`);
  assert.equal(byPrefix.body.tasks.map((t: any) => t.id), [hit.id]);
});

T.run();
