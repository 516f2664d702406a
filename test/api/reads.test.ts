import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sddLayout } from '../../src/store/layout.ts';
import { assertError, assertValidation, boot, title, type Api } from './support.ts';

// Board reads over HTTP: lists, search, counts, archive, graph, progress, snapshots, gates, patch.
let a: Api;
const T = suite('task reads over HTTP');
const TENANTS = { default: {}, bulk: { max_tasks: 5000 }, cnt: {}, arc: {}, arc2: {}, gr: {}, srch: {} };
T.before(async () => {
  a = await boot({ before: (repo) => {
    mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
    writeFileSync(join(repo.dir, '.sdd', 'tenants.json'), JSON.stringify(TENANTS, null, 2) + '\n');
  } });
});
T.after(async () => { await a?.close(); });
const as = (tenant: string) => ({ 'x-tenant-id': tenant });

T('POST /tasks answers 201 with the whole task record and the defaults of DECISIONS.md', async () => {
  const r = await a.s.api('POST', '/tasks', { title: 'Write the parser', ignored_key: true });
  assert.is(r.status, 201);
  const keys = ['id', 'title', 'description', 'role', 'priority', 'scope', 'complexity', 'status', 'assigned_agent', 'claimed_by_session',
    'parent_session_id', 'parent_task_id', 'depends_on', 'owned_files', 'cell_id', 'tenant', 'version', 'estimated_minutes', 'model',
    'result_summary', 'failure', 'metadata', 'chat_context', 'node_id', 'retry_count', 'max_retries', 'created_at', 'updated_at',
    'claimed_at', 'completed_at'];
  for (const k of keys) assert.ok(k in r.body, `task has ${k}`);
  assert.match(r.body.id, /^[0-9a-z]{26}$/);
  assert.equal(
    { role: r.body.role, priority: r.body.priority, scope: r.body.scope, complexity: r.body.complexity, status: r.body.status, version: r.body.version,
      estimated_minutes: r.body.estimated_minutes, max_retries: r.body.max_retries, tenant: r.body.tenant, description: r.body.description },
    { role: 'backend', priority: 2, scope: 'medium', complexity: 'medium', status: 'open', version: 1, estimated_minutes: 30, max_retries: 2, tenant: 'default', description: '' },
  );
  assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(!('ignored_key' in r.body));
  assert.equal(await a.get(r.body.id), r.body);
});

T('flat GET /tasks carries Deprecation and Link headers and is capped at 1000 tasks', async () => {
  const items = Array.from({ length: 1005 }, (_, i) => ({ title: `bulk ${i}` }));
  const b1 = await a.s.api('POST', '/tasks/batch', { tasks: items.slice(0, 1000) }, as('bulk'));
  assert.is(b1.status, 201, JSON.stringify(b1.body).slice(0, 300));
  const b2 = await a.s.api('POST', '/tasks/batch', { tasks: items.slice(1000) }, as('bulk'));
  assert.is(b2.status, 201);
  const flat = await a.s.api('GET', '/tasks', undefined, as('bulk'));
  assert.is(flat.status, 200);
  assert.ok(Array.isArray(flat.body));
  assert.is(flat.body.length, 1000);
  assert.ok(flat.headers.get('deprecation'), 'Deprecation header');
  assert.match(flat.headers.get('link') ?? '', /limit=.*rel="successor-version"/);
  const page = await a.s.api('GET', '/tasks?limit=500&offset=1000', undefined, as('bulk'));
  assert.is(page.body.total, 1005);
  assert.is(page.body.tasks.length, 5);
  assert.is(page.headers.get('deprecation'), null, 'the paginated form is not deprecated');
});

T('GET /tasks with limit/offset answers the envelope {tasks,total,limit,offset} in creation order, filtered', async () => {
  const made = [];
  for (let i = 0; i < 4; i++) made.push(await a.create({ cell_id: 'cell-pg' }, as('cnt')));
  const r = await a.s.api('GET', '/tasks?limit=2&offset=1&cell_id=cell-pg', undefined, as('cnt'));
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['limit', 'offset', 'tasks', 'total']);
  assert.is(r.body.total, 4);
  assert.is(r.body.limit, 2);
  assert.is(r.body.offset, 1);
  assert.equal(r.body.tasks.map((t: any) => t.id), [made[1].id, made[2].id]);
  const onlyOffset = await a.s.api('GET', '/tasks?offset=3&cell_id=cell-pg', undefined, as('cnt'));
  assert.is(onlyOffset.body.tasks.length, 1);
  await a.s.api('POST', `/tasks/${made[0].id}/claim?claimed_by_session=pg-sess`, undefined, as('cnt'));
  const bySession = await a.s.api('GET', '/tasks?claimed_by_session=pg-sess&limit=10', undefined, as('cnt'));
  assert.equal(bySession.body.tasks.map((t: any) => t.id), [made[0].id]);
  const byStatus = await a.s.api('GET', '/tasks?status=claimed&limit=10', undefined, as('cnt'));
  assert.is(byStatus.body.total, 1);
  for (const q of ['limit=0', 'limit=501', 'offset=-1', 'limit=abc', 'status=bogus']) assertValidation(await a.s.api('GET', `/tasks?${q}`), 'query');
});

T('GET /tasks/counts answers one key per status plus total, for the caller\'s tenant only', async () => {
  const r = await a.s.api('GET', '/tasks/counts', undefined, as('cnt'));
  assert.is(r.status, 200);
  const statuses = ['open', 'claimed', 'in_progress', 'done', 'failed', 'closed', 'blocked', 'waiting_for_subtasks', 'refused', 'cancelled'];
  assert.equal(Object.keys(r.body).sort(), [...statuses, 'total'].sort());
  assert.is(r.body.total, 4);
  assert.is(r.body.open, 3);
  assert.is(r.body.claimed, 1);
  const q = await a.s.api('GET', '/tasks/counts?tenant=cnt');
  assert.equal(q.body, r.body);
  assertError(await a.s.api('GET', '/tasks/counts?tenant=nope'), 404, /unknown tenant/);
});

T('GET /tasks/search sorts, orders and pages; bad page/per_page/sort/order → 422', async () => {
  const h = as('srch');
  const specs = [{ title: 'charlie', priority: 5 }, { title: 'alpha', priority: 1 }, { title: 'echo', priority: 3 }, { title: 'bravo', priority: 9 }, { title: 'delta', priority: 0, role: 'qa' }];
  const made: any[] = [];
  for (const s of specs) made.push(await a.create(s, h));
  const def = await a.s.api('GET', '/tasks/search', undefined, h);
  assert.is(def.status, 200);
  assert.equal({ ...def.body, tasks: undefined }, { tasks: undefined, total: 5, page: 1, per_page: 20, total_pages: 1, sort: 'created_at', order: 'desc' });
  assert.equal(def.body.tasks.map((t: any) => t.title), ['delta', 'bravo', 'echo', 'alpha', 'charlie']);
  const byPrio = await a.s.api('GET', '/tasks/search?sort=priority&order=asc&per_page=2&page=2', undefined, h);
  assert.equal(byPrio.body.tasks.map((t: any) => t.title), ['echo', 'charlie']);
  assert.is(byPrio.body.total_pages, 3);
  const byTitle = await a.s.api('GET', '/tasks/search?sort=title&order=asc&role=backend', undefined, h);
  assert.equal(byTitle.body.tasks.map((t: any) => t.title), ['alpha', 'bravo', 'charlie', 'echo']);
  const last = await a.s.api('GET', '/tasks/search?per_page=2&page=3', undefined, h);
  assert.is(last.body.tasks.length, 1);
  const beyond = await a.s.api('GET', '/tasks/search?per_page=2&page=9', undefined, h);
  assert.is(beyond.body.tasks.length, 0);
  for (const q of ['page=0', 'per_page=0', 'per_page=101', 'sort=bogus', 'order=up', 'status=nope']) {
    assertValidation(await a.s.api('GET', `/tasks/search?${q}`, undefined, h), 'query');
  }
});

T('GET /tasks/archive lists done and failed tasks newest last, limited, per tenant', async () => {
  const h = as('arc');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const t = await a.create({}, h);
    await a.s.api('POST', `/tasks/${t.id}/claim`, undefined, h);
    const r = await a.s.api('POST', `/tasks/${t.id}/complete`, { result_summary: `r${i}` }, h);
    assert.is(r.status, 200);
    ids.push(t.id);
  }
  const f = await a.create({}, h);
  await a.s.api('POST', `/tasks/${f.id}/fail`, { reason: 'no' }, h);
  ids.push(f.id);
  const all = await a.s.api('GET', '/tasks/archive', undefined, h);
  assert.is(all.status, 200);
  assert.equal(all.body.map((r: any) => r.task_id), ids);
  const rec = all.body[0];
  for (const k of ['task_id', 'title', 'role', 'tenant', 'status', 'created_at', 'completed_at', 'duration_s', 'result_summary', 'assigned_agent', 'claimed_by_session']) assert.ok(k in rec, k);
  assert.is(rec.status, 'done');
  assert.is(all.body[3].status, 'failed');
  const two = await a.s.api('GET', '/tasks/archive?limit=2', undefined, h);
  assert.equal(two.body.map((r: any) => r.task_id), ids.slice(2));
  assertValidation(await a.s.api('GET', '/tasks/archive?limit=0', undefined, h), 'query');
  const other = await a.s.api('GET', '/tasks/archive', undefined, as('gr'));
  assert.equal(other.body, []);
});

T('GET /tasks/archive answers the last 50 records by default', async () => {
  const h = as('arc2');
  const made = (await a.s.api('POST', '/tasks/batch', { tasks: Array.from({ length: 53 }, (_, i) => ({ title: `arch ${i}` })) }, h)).body.created;
  for (const t of made) assert.is((await a.s.api('POST', `/tasks/${t.id}/fail`, { reason: 'archived' }, h)).status, 200);
  const r = await a.s.api('GET', '/tasks/archive', undefined, h);
  assert.is(r.body.length, 50);
  assert.equal(r.body.map((x: any) => x.task_id), made.slice(3).map((t: any) => t.id));
});

T('GET /tasks/graph: critical path, parallel width and bottlenecks of a small DAG; graph-neighbors', async () => {
  const h = as('gr');
  const A = await a.create({ title: 'A', estimated_minutes: 10 }, h);
  const B = await a.create({ title: 'B', estimated_minutes: 20, depends_on: [A.id] }, h);
  const C = await a.create({ title: 'C', estimated_minutes: 60, depends_on: [A.id] }, h);
  const D = await a.create({ title: 'D', estimated_minutes: 5, depends_on: [B.id, C.id] }, h);
  const E = await a.create({ title: 'E', estimated_minutes: 1 }, h);
  const g = await a.s.api('GET', '/tasks/graph', undefined, h);
  assert.is(g.status, 200);
  assert.equal(g.body.nodes.map((n: any) => n.id).sort(), [A.id, B.id, C.id, D.id, E.id].sort());
  assert.equal(Object.keys(g.body.nodes[0]).sort(), ['estimated_minutes', 'id', 'role', 'status', 'title']);
  assert.is(g.body.edges.length, 4);
  assert.ok(g.body.edges.some((e: any) => e.from === A.id && e.to === B.id && e.type === 'depends_on' && e.semantic_type === 'blocks'));
  assert.equal(g.body.critical_path, [A.id, C.id, D.id]);
  assert.is(g.body.critical_path_minutes, 75);
  assert.is(g.body.parallel_width, 2);
  assert.equal(g.body.bottlenecks, [A.id]);
  const child = await a.s.api('POST', '/tasks/self-create', { title: 'E.1', parent_task_id: E.id }, h);
  const g2 = await a.s.api('GET', '/tasks/graph?tenant=gr');
  assert.ok(g2.body.edges.some((e: any) => e.from === E.id && e.to === child.body.id && e.type === 'parent' && e.semantic_type === 'informs'));
  const n = await a.s.api('GET', `/tasks/${B.id}/graph-neighbors`, undefined, h);
  assert.is(n.status, 200);
  assert.is(n.body.task_id, B.id);
  assert.equal(n.body.upstream.map((t: any) => t.id), [A.id]);
  assert.equal(n.body.downstream.map((t: any) => t.id), [D.id]);
  assert.is(n.body.upstream[0].title, 'A', 'neighbours are whole tasks');
  assertError(await a.s.api('GET', `/tasks/${B.id}/graph-neighbors`), 404, `Task '${B.id}' not found`);
});

T('progress: POST appends, the first one starts a claimed task; GET gives run id, vector and stalled', async () => {
  const t = await a.claimed({}, 'sess-p');
  const first = await a.verb(t.id, 'progress', { message: 'reading code', percent: 10, files_changed: 1, tests_passing: 2, errors: 3 });
  assert.is(first.status, 200);
  assert.is(first.body.status, 'in_progress');
  await a.verb(t.id, 'progress', { message: 'half way', percent: 50 });
  await a.verb(t.id, 'progress', { files_changed: 4, tests_passing: 10, errors: 0, last_file: 'src/x.ts' });
  const p = await a.s.api('GET', `/tasks/${t.id}/progress?run_id=forged#9`);
  assert.is(p.status, 200);
  assert.is(p.body.task_id, t.id);
  assert.is(p.body.run_id, 'sess-p#1', 'the run id comes from the claim, not from the client');
  assert.is(p.body.entries.length, 3);
  assert.is(p.body.entries[1].message, 'half way');
  assert.equal(p.body.vector, { files_changed: 3, tests_passing: 8, errors: -3 });
  assert.is(p.body.latest.last_file, 'src/x.ts');
  assert.is(p.body.stalled, false);
  for (let i = 0; i < 5; i++) await a.verb(t.id, 'progress', { files_changed: 4, tests_passing: 10, errors: 0 });
  assert.is((await a.s.api('GET', `/tasks/${t.id}/progress`)).body.stalled, true, 'five identical snapshots mean stalled');
  // A new claim is a new run: the vector starts again.
  await a.verb(t.id, 'release', {});
  await a.s.api('POST', `/tasks/${t.id}/claim?claimed_by_session=sess-q`);
  await a.verb(t.id, 'progress', { files_changed: 7, tests_passing: 0, errors: 0 });
  const p2 = await a.s.api('GET', `/tasks/${t.id}/progress`);
  assert.is(p2.body.run_id, 'sess-q#2');
  assert.equal(p2.body.vector, { files_changed: 0, tests_passing: 0, errors: 0 });
  assert.is(p2.body.entries.length, 1);
  assert.is(p2.body.stalled, false);
  assertValidation(await a.verb(t.id, 'progress', { percent: 101 }), 'body');
  assertValidation(await a.verb(t.id, 'progress', { files_changed: -1 }), 'body');
  assertError(await a.verb('01zzzzzzzzzzzzzzzzzzzzzzzz', 'progress', {}), 404);
  assertError(await a.s.api('GET', '/tasks/01zzzzzzzzzzzzzzzzzzzzzzzz/progress'), 404);
});

T('snapshots: at most 10, oldest first (the latest ten, in order)', async () => {
  const t = await a.claimed();
  for (let i = 1; i <= 12; i++) await a.verb(t.id, 'progress', { files_changed: i, tests_passing: 0, errors: 0 });
  const r = await a.s.api('GET', `/tasks/${t.id}/snapshots`);
  assert.is(r.status, 200);
  assert.is(r.body.length, 10);
  assert.equal(r.body.map((s: any) => s.files_changed), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  for (const k of ['files_changed', 'tests_passing', 'errors', 'ts']) assert.ok(k in r.body[0], k);
  const none = await a.create();
  assert.equal((await a.s.api('GET', `/tasks/${none.id}/snapshots`)).body, []);
  assertError(await a.s.api('GET', '/tasks/01zzzzzzzzzzzzzzzzzzzzzzzz/snapshots'), 404);
});

T('gates: 404 when no report, 500 when unreadable, 200 with the report', async () => {
  const t = await a.create();
  assertError(await a.s.api('GET', `/tasks/${t.id}/gates`), 404, /Gate report .* not found/);
  const file = sddLayout(a.repo.dir).gates(t.id);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '{ not json');
  const bad = await a.s.api('GET', `/tasks/${t.id}/gates`);
  assertError(bad, 500, /unreadable/);
  const report = { task_id: t.id, session_id: null, overall_pass: true, results: [], started_at: t.created_at, finished_at: t.created_at };
  writeFileSync(file, JSON.stringify(report));
  const good = await a.s.api('GET', `/tasks/${t.id}/gates`);
  assert.is(good.status, 200);
  assert.equal(good.body, report);
  assertError(await a.s.api('GET', '/tasks/01zzzzzzzzzzzzzzzzzzzzzzzz/gates'), 404);
});

T('prioritize sets priority 0 and the task jumps the queue; PATCH changes role, priority, model', async () => {
  const first = await a.create({ role: 'prio', priority: 3 });
  const second = await a.create({ role: 'prio', priority: 3 });
  const p = await a.s.api('POST', `/tasks/${second.id}/prioritize`);
  assert.is(p.status, 200);
  assert.is(p.body.id, second.id);
  assert.is(p.body.priority, 0);
  assert.is((await a.s.api('GET', '/tasks/next/prio')).body.id, second.id);
  const r = await a.s.api('PATCH', `/tasks/${first.id}`, { role: 'moved', priority: 7, model: 'big-model' });
  assert.is(r.status, 200);
  assert.equal([r.body.role, r.body.priority, r.body.model, r.body.version], ['moved', 7, 'big-model', first.version + 1]);
  assertError(await a.s.api('GET', '/tasks/next/prio'), 404);
  assert.is((await a.s.api('GET', '/tasks/next/moved')).body.id, first.id, 'the ready queue follows the new role');
  assertValidation(await a.s.api('PATCH', `/tasks/${first.id}`, { priority: 1001 }), 'body');
  assertValidation(await a.s.api('PATCH', `/tasks/${first.id}`, { role: 'Not A Role' }), 'body');
  assertError(await a.s.api('PATCH', '/tasks/01zzzzzzzzzzzzzzzzzzzzzzzz', { priority: 1 }), 404);
  assertError(await a.s.api('POST', '/tasks/01zzzzzzzzzzzzzzzzzzzzzzzz/prioritize'), 404);
  void title;
});

T.run();
