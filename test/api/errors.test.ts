import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, assertValidation, boot, type Api } from './support.ts';

// Error statuses of the task API (422 shape, 413, 404, 401, 503 draining) and the published description.
let a: Api;
const T = suite('task API errors and description');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });
const GHOST = '01zzzzzzzzzzzzzzzzzzzzzzzz';

T('bad create bodies answer 422 {"detail":[{loc,msg,type}]} naming the field', async () => {
  const cases: [unknown, string][] = [
    [{}, 'title'], [{ title: '' }, 'title'], [{ title: 'x'.repeat(501) }, 'title'], [{ title: 5 }, 'title'],
    [{ title: 'ok', priority: 1001 }, 'priority'], [{ title: 'ok', priority: 1.5 }, 'priority'], [{ title: 'ok', role: 'Bad Role' }, 'role'],
    [{ title: 'ok', scope: 'huge' }, 'scope'], [{ title: 'ok', complexity: 'extreme' }, 'complexity'], [{ title: 'ok', estimated_minutes: 0 }, 'estimated_minutes'],
    [{ title: 'ok', owned_files: Array.from({ length: 101 }, (_, i) => `f${i}`) }, 'owned_files'], [{ title: 'ok', depends_on: ['../etc'] }, 'depends_on'],
  ];
  for (const [body, field] of cases) {
    const issues = assertValidation(await a.s.api('POST', '/tasks', body), 'body');
    assert.ok(issues.some((i) => i.loc[1] === field), `${JSON.stringify(body).slice(0, 60)} names ${field}: ${JSON.stringify(issues)}`);
  }
  const missing = assertValidation(await a.s.api('POST', '/tasks', {}), 'body');
  assert.equal(missing[0], { loc: ['body', 'title'], msg: missing[0]!.msg, type: 'missing' });
  const junk = assertValidation(await a.s.api('POST', '/tasks', '{"title": '), 'body');
  assert.is(junk[0]!.type, 'json_invalid');
  assertValidation(await a.s.api('POST', '/tasks', '[1,2]'), 'body');
  assertError(await a.s.api('POST', '/tasks', { title: 'ok', depends_on: [GHOST] }), 422, new RegExp(`non-existent task.*${GHOST}`));
  assertError(await a.s.api('POST', '/tasks', { title: 'ok', metadata: { blob: 'x'.repeat(50_001) } }), 422, /metadata/);
  assertError(await a.s.api('POST', '/tasks', { title: 'ok', parent_task_id: GHOST }), 404, /not found/);
  assert.equal((await a.s.api('GET', '/tasks/counts')).body.total, 0, 'nothing was created by the refused bodies');
});

T('a body over 1 MiB answers 413', async () => {
  const r = await a.s.api('POST', '/tasks', { title: 'big', description: 'a'.repeat(1_100_000) });
  assertError(r, 413, /exceeds/);
  const r2 = await a.s.api('POST', '/tasks/batch', { tasks: Array.from({ length: 900 }, (_, i) => ({ title: `t${i}`, description: 'b'.repeat(1300) })) });
  assert.is(r2.status, 413);
  assert.is((await a.s.api('GET', '/tasks/counts')).body.total, 0);
});

T('bad queries and bodies of the other task routes answer 422 in the same shape', async () => {
  const t = await a.create();
  const q = (method: string, path: string, body?: unknown) => a.s.api(method, path, body);
  assertValidation(await q('GET', '/tasks/next/backend?wait_s=61'), 'query');
  assertValidation(await q('GET', '/tasks/next/backend?wait_s=-1'), 'query');
  assertValidation(await q('POST', `/tasks/${t.id}/claim?expected_version=abc`), 'query');
  assertValidation(await q('POST', '/tasks/claim-batch', { task_ids: [] }), 'body');
  assertValidation(await q('POST', '/tasks/claim-batch', {}), 'body');
  assertValidation(await q('POST', '/tasks/batch', { tasks: [{ title: 'fine' }, { priority: 1 }] }), 'body');
  assertValidation(await q('POST', `/tasks/${t.id}/complete`, {}), 'body');
  assertValidation(await q('POST', `/tasks/${t.id}/complete`, { result_summary: 'x', payload: 'not an object' }), 'body');
  assertValidation(await q('POST', `/tasks/${t.id}/wait-for-subtasks`, { subtask_count: -2 }), 'body');
  assertValidation(await q('POST', `/tasks/${t.id}/fail`, { reason: 7 }), 'body');
  assertValidation(await q('POST', '/tasks/self-create', { title: 'no parent' }), 'body');
  assertValidation(await q('GET', '/tasks?limit=1&limit=2'), 'query');
  assert.is((await a.get(t.id)).status, 'open', 'refused requests left the task alone');
});

T('unknown task ids answer 404 {"detail":"Task \'<id>\' not found"} on every read', async () => {
  for (const path of ['', '/progress', '/snapshots', '/gates', '/graph-neighbors']) {
    assertError(await a.s.api('GET', `/tasks/${GHOST}${path}`), 404, `Task '${GHOST}' not found`);
  }
  assertError(await a.s.api('GET', '/tasks/..%2F..%2Fetc%2Fpasswd'), 404, /not found/);
  assertError(await a.s.api('GET', '/tasks/next/nobody'), 404, "No open tasks for role 'nobody'");
});

T('requests without a valid token answer 401; the docs and description are public', async () => {
  for (const [m, p] of [['GET', '/tasks'], ['POST', '/tasks'], ['GET', '/tasks/counts'], ['GET', '/drain']]) {
    const r = await fetch(a.s.url + p!, { method: m });
    assert.is(r.status, 401, `${m} ${p}`);
    assert.type(((await r.json()) as any).detail, 'string');
  }
  assert.is((await a.s.api('GET', '/tasks', undefined, { authorization: 'Bearer wrong' })).status, 401);
  const docs = await fetch(a.s.url + '/docs');
  assert.is(docs.status, 200);
  assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await docs.text(), /<html/i);
});

// Every task route of INTERFACE.md's Tasks table plus unblock and drain: [method, path, has a request body].
const ROUTES: [string, string, boolean][] = [
  ['post', '/tasks', true], ['get', '/tasks', false], ['get', '/tasks/search', false], ['post', '/tasks/batch', true],
  ['post', '/tasks/self-create', true], ['get', '/tasks/next/{role}', false], ['post', '/tasks/claim-batch', true],
  ['post', '/tasks/{task_id}/claim', false], ['post', '/tasks/{task_id}/complete', true], ['post', '/tasks/{task_id}/wait-for-subtasks', true],
  ['post', '/tasks/{task_id}/fail', true], ['post', '/tasks/{task_id}/release', true], ['post', '/tasks/{task_id}/reopen', true],
  ['post', '/tasks/{task_id}/close', false], ['post', '/tasks/{task_id}/cancel', true], ['post', '/tasks/{task_id}/block', true],
  ['post', '/tasks/{task_id}/unblock', true], ['post', '/tasks/{task_id}/progress', true], ['get', '/tasks/{task_id}/progress', false],
  ['get', '/tasks/{task_id}/snapshots', false], ['get', '/tasks/counts', false], ['get', '/tasks/archive', false], ['get', '/tasks/graph', false],
  ['get', '/tasks/{task_id}', false], ['patch', '/tasks/{task_id}', true], ['get', '/tasks/{task_id}/graph-neighbors', false],
  ['get', '/tasks/{task_id}/gates', false], ['post', '/tasks/{task_id}/prioritize', false],
  ['get', '/drain', false], ['post', '/drain', false], ['post', '/drain/cancel', false],
];

T('/openapi.json lists every task route with its request and response schemas', async () => {
  const r = await fetch(a.s.url + '/openapi.json');
  assert.is(r.status, 200);
  const doc = (await r.json()) as any;
  assert.match(doc.openapi, /^3\./);
  const resolve = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
  for (const [method, path, hasBody] of ROUTES) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
    const ok = op.responses['200'] ?? op.responses['201'];
    assert.ok(ok?.content?.['application/json']?.schema, `${method} ${path} has a success schema`);
    assert.ok(resolve(ok.content['application/json'].schema), `${method} ${path} success schema resolves`);
    if (hasBody) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      assert.ok(schema && resolve(schema), `${method} ${path} has a request schema`);
    }
    if (path.includes('{task_id}') || op.requestBody || op.parameters) assert.ok(op.responses['422'], `${method} ${path} documents 422`);
  }
  const task = doc.components.schemas.Task;
  for (const k of ['id', 'status', 'version', 'depends_on', 'metadata']) assert.ok(task.properties[k], `Task.${k}`);
  assert.ok(doc.paths['/tasks/{task_id}/claim'].post.parameters.some((p: any) => p.name === 'expected_version' && p.in === 'query'));
  assert.ok(doc.paths['/tasks/next/{role}'].get.parameters.some((p: any) => p.name === 'wait_s'));
});

T('draining: create, batch, next, claim, claim-batch and /health/ready answer 503; reads and other verbs still work', async () => {
  const t = await a.create({ role: 'drn' });
  const claimed = await a.claimed();
  const d = await a.s.api('POST', '/drain');
  assert.is(d.status, 200);
  assert.is(d.body.draining, true);
  assert.is((await a.s.api('GET', '/drain')).body.draining, true);
  try {
    assertError(await a.s.api('POST', '/tasks', { title: 'late' }), 503, /draining/);
    assertError(await a.s.api('POST', '/tasks/batch', { tasks: [{ title: 'late batch' }] }), 503, /draining/);
    assertError(await a.s.api('POST', '/tasks/self-create', { title: 'late child', parent_task_id: claimed.id }), 503, /draining/);
    assertError(await a.s.api('GET', '/tasks/next/drn'), 503, /draining/);
    assertError(await a.s.api('POST', `/tasks/${t.id}/claim`), 503, /draining/);
    assertError(await a.s.api('POST', '/tasks/claim-batch', { task_ids: [t.id] }), 503, /draining/);
    assert.is((await fetch(a.s.url + '/health/ready')).status, 503);
    assert.is((await a.s.api('GET', `/tasks/${t.id}`)).status, 200);
    const done = await a.verb(claimed.id, 'complete', { result_summary: 'finished while draining' });
    assert.is(done.body.status, 'done', 'work in flight can still finish');
  } finally {
    const c = await a.s.api('POST', '/drain/cancel');
    assert.is(c.body.draining, false);
  }
  assert.is((await fetch(a.s.url + '/health/ready')).status, 200);
  assert.is((await a.s.api('GET', '/tasks/next/drn')).body.id, t.id);
});

T.run();
