import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { conflict, HttpError, tooMany } from '../../src/lib/http-error.ts';
import { createLogger } from '../../src/lib/log.ts';
import { defineRoute, RAW, type Route } from '../../src/lib/route.ts';
import { DomainError } from '../../src/lib/domain-error.ts';
import { StorageUnavailable, VersionConflict } from '../../src/store/types.ts';
import { ClaimBlocked, TaskNotFound } from '../../src/tasks/errors.ts';
import { ADMIN, startServer, type Harness } from './harness.ts';

const lines: string[] = [];
const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });

const get = (path: string, handler: Route['handler']) => defineRoute({
  method: 'GET', path, operationId: path.replace(/\W/g, '_'), summary: path, tags: ['t'], access: 'read',
  responses: { 200: { description: 'ok' } }, handler,
});
const routes: Route[] = [
  get('/boom', () => { throw new Error('secret path /etc/shadow exploded'); }),
  get('/boom-async', async () => { await new Promise((r) => setTimeout(r, 1)); throw new TypeError('async secret'); }),
  get('/conflict', () => { throw new VersionConflict('/x/task.json', 3, { version: 5 }); }),
  get('/disk-full', () => { throw new StorageUnavailable('/x/task.json', 'ENOSPC'); }),
  get('/teapot', () => { throw new HttpError(418, 'no coffee', { hint: 'tea' }, { 'x-why': 'teapot' }); }),
  get('/quota', () => { throw tooMany('Tenant default has reached max_tasks limit (3)', 30); }),
  get('/state', () => { throw conflict("Cannot claim task 'a' in state 'done'"); }),
  get('/half-written', ({ res }) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.write('partial'); throw new Error('after headers'); }),
  get('/gone', () => { throw new TaskNotFound('t9'); }),
  get('/blocked', () => { throw new ClaimBlocked('t9', "Task 't9' has unresolved dependencies: t1"); }),
  get('/unmapped', () => { throw new DomainError('nobody_maps_this', 'a code without a status', {}); }),
  get('/raw', ({ res }) => { res.writeHead(202, { 'content-type': 'text/plain' }).end('raw text'); return RAW; }),
];

let h: Harness;
const T = suite('errors');
T.before(async () => { h = await startServer({ routes, log: createLogger({ json: true, stream: sink }) }); });
T.after(async () => { await h.close(); });

T('a throwing handler → 500 internal error; message not leaked; logged with request id and stack', async () => {
  for (const path of ['/boom', '/boom-async']) {
    const r = await h.fetch(path, { token: ADMIN, headers: { 'x-request-id': `rid-${path.slice(1)}` } });
    assert.is(r.status, 500);
    const text = await r.text();
    assert.equal(JSON.parse(text), { detail: 'internal error' });
    assert.not.match(text, /secret/);
  }
  const logged = lines.join('');
  assert.match(logged, /\[rid-boom\] GET \/boom failed/);
  assert.match(logged, /secret path \/etc\/shadow exploded/);
  assert.match(logged, /at .*errors\.test\.ts/);
  assert.match(logged, /\[rid-boom-async\]/);
});

T('VersionConflict → 409 with current_version', async () => {
  const r = await h.fetch('/conflict', { token: ADMIN });
  assert.is(r.status, 409);
  const b = await r.json();
  assert.is(b.current_version, 5);
  assert.type(b.detail, 'string');
});

T('StorageUnavailable → 503 naming the code', async () => {
  const r = await h.fetch('/disk-full', { token: ADMIN });
  assert.is(r.status, 503);
  assert.equal(await r.json(), { detail: 'storage unavailable: ENOSPC' });
});

T('HttpError keeps status, extra members and headers (429 Retry-After)', async () => {
  let r = await h.fetch('/teapot', { token: ADMIN });
  assert.is(r.status, 418);
  assert.is(r.headers.get('x-why'), 'teapot');
  assert.equal(await r.json(), { detail: 'no coffee', hint: 'tea' });
  r = await h.fetch('/quota', { token: ADMIN });
  assert.is(r.status, 429);
  assert.is(r.headers.get('retry-after'), '30');
  r = await h.fetch('/state', { token: ADMIN });
  assert.equal([r.status, await r.json()], [409, { detail: "Cannot claim task 'a' in state 'done'" }]);
});

T('a domain error answers the status of its code, with the code and its data in the body; an unmapped code is a 500', async () => {
  let r = await h.fetch('/gone', { token: ADMIN });
  assert.equal([r.status, await r.json()], [404, { detail: "Task 't9' not found", code: 'task_not_found', task_id: 't9' }]);
  r = await h.fetch('/blocked', { token: ADMIN });
  assert.equal([r.status, await r.json()], [409, { detail: "Task 't9' has unresolved dependencies: t1", code: 'claim_blocked', task_id: 't9' }]);
  r = await h.fetch('/unmapped', { token: ADMIN });
  assert.equal([r.status, await r.json()], [500, { detail: 'internal error' }]);
});

T('an error after headers were sent ends the response instead of hanging', async () => {
  const r = await h.fetch('/half-written', { token: ADMIN });
  assert.is(r.status, 200);
  assert.is(await r.text(), 'partial');
});

T('RAW handlers own the response', async () => {
  const r = await h.fetch('/raw', { token: ADMIN });
  assert.is(r.status, 202);
  assert.is(await r.text(), 'raw text');
});

T('bad input never produces a 5xx', async () => {
  const probes: [string, RequestInit][] = [
    ['/%E0%A4%A', {}], ['/tasks/..%2F..%2Fetc', {}], ['/health?x=%ZZ', {}], ['/metrics', { method: 'POST', body: '{' }],
    ['/boom?' + 'a=1&'.repeat(2000), { method: 'DELETE' }], ['/docs/..%2Fpackage.json', {}], ['/docs/%00', {}],
  ];
  for (const [path, init] of probes) {
    const r = await h.fetch(path, { ...init, token: ADMIN } as RequestInit & { token: string });
    assert.ok(r.status < 500, `${path} → ${r.status}`);
    await r.arrayBuffer();
  }
});

T.run();
