import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Type } from '@sinclair/typebox';
import { createToken, ensureAdminToken, readAdminTokenFile, revokeToken } from '../../src/auth/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/log.ts';
import { defineRoute, type Access, type Route } from '../../src/lib/route.ts';
import { ADMIN, startServer, type Harness } from '../server/harness.ts';

const echo = (method: 'GET' | 'POST', path: string, access: Access): Route => defineRoute({
  method, path, operationId: `${method}_${path}`.replace(/\W/g, '_'), summary: path, tags: ['t'], access,
  ...(path.includes(':task_id') ? { params: Type.Object({ task_id: Type.String() }), taskScope: 'own' as const } : {}),
  responses: { 200: { description: 'The principal' } }, handler: ({ principal }) => principal,
});
const routes = [
  echo('GET', '/read', 'read'), echo('POST', '/task-op', 'task'), echo('POST', '/operate', 'operate'), echo('POST', '/admin', 'admin'),
  echo('POST', '/tasks/:task_id/complete', 'task'), echo('POST', '/webhook', 'hmac'), echo('GET', '/open', 'public'),
];

const clock = manualClock(Date.parse('2026-05-01T00:00:00.000Z'));
let h: Harness;
const A = suite('bearer authentication');
A.before(async () => { h = await startServer({ routes, clock }); });
A.after(async () => { await h.close(); });

const status = async (path: string, init: RequestInit & { token?: string } = {}) => (await h.fetch(path, init)).status;

A('missing or malformed Authorization → 401 Missing or invalid Authorization header', async () => {
  for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', 'token abc']) {
    const r = await h.fetch('/read', authorization ? { headers: { authorization } } : {});
    assert.is(r.status, 401, String(authorization));
    assert.equal(await r.json(), { detail: 'Missing or invalid Authorization header' });
  }
});

A('unknown token → 401 Invalid or expired authentication token', async () => {
  const r = await h.fetch('/read', { token: 'svc_not-a-real-token' });
  assert.is(r.status, 401);
  assert.equal(await r.json(), { detail: 'Invalid or expired authentication token' });
});

A('SERVICE_AUTH_TOKEN is an admin; the bearer scheme is case-insensitive', async () => {
  const r = await h.fetch('/admin', { method: 'POST', token: ADMIN });
  assert.equal(await r.json(), { kind: 'env', role: 'admin', tenant: null, actor: 'env' });
  assert.is(await status('/admin', { method: 'POST', headers: { authorization: `bearer ${ADMIN}` } }), 200);
  assert.is(await status('/admin', { method: 'POST', token: ADMIN + 'x' }), 401);
});

A('a token created while the server runs works at once; revoked → 401 on the next request', async () => {
  const { token, record } = await createToken(h.layout, { role: 'viewer', tenant: 'acme' }, clock);
  const r = await h.fetch('/read', { token });
  assert.equal(await r.json(), { kind: 'token', role: 'viewer', tenant: 'acme', actor: record.id });
  await revokeToken(h.layout, record.id, clock);
  const again = await h.fetch('/read', { token });
  assert.is(again.status, 401);
  assert.equal(await again.json(), { detail: 'Invalid or expired authentication token' });
});

A('many concurrent first uses of a new token all succeed (one shared reload)', async () => {
  const { token } = await createToken(h.layout, { role: 'viewer' }, clock);
  const codes = await Promise.all(Array.from({ length: 40 }, () => status('/read', { token })));
  assert.equal([...new Set(codes)], [200]);
});

A('an expired token → 401', async () => {
  const { token } = await createToken(h.layout, { role: 'viewer', expiresIn: '1h' }, clock);
  assert.is(await status('/read', { token }), 200);
  clock.advance(3_600_000);
  assert.is(await status('/read', { token }), 401);
});

A('hand edits of tokens.json are picked up; a corrupt file keeps the last good tokens', async () => {
  const { token } = await createToken(h.layout, { role: 'agent' }, clock);
  assert.is(await status('/task-op', { method: 'POST', token }), 200);
  writeFileSync(h.layout.tokens, '{ this is not json');
  assert.is(await status('/task-op', { method: 'POST', token }), 200, 'last good set kept');
  writeFileSync(h.layout.tokens, JSON.stringify({ version: 9, tokens: [] }));
  assert.is(await status('/task-op', { method: 'POST', token }), 401, 'emptied by hand');
});

A('admin.token written by the first start is accepted as admin', async () => {
  await ensureAdminToken(h.layout, clock);
  const token = await readAdminTokenFile(h.layout);
  const r = await h.fetch('/admin', { method: 'POST', token: token! });
  assert.equal((await r.json()).kind, 'admin-file');
});

A('roles: each level answers 403 with the contract detail', async () => {
  const viewer = (await createToken(h.layout, { role: 'viewer' }, clock)).token;
  const agent = (await createToken(h.layout, { role: 'agent' }, clock)).token;
  const operator = (await createToken(h.layout, { role: 'operator' }, clock)).token;
  let r = await h.fetch('/task-op', { method: 'POST', token: viewer });
  assert.equal([r.status, await r.json()], [403, { detail: 'viewer role cannot access this endpoint' }]);
  r = await h.fetch('/operate', { method: 'POST', token: agent });
  assert.equal([r.status, await r.json()], [403, { detail: 'agent role cannot access this endpoint' }]);
  r = await h.fetch('/admin', { method: 'POST', token: operator });
  assert.equal([r.status, await r.json()], [403, { detail: 'admin role required' }]);
  assert.is(await status('/read', { token: viewer }), 200);
  assert.is(await status('/task-op', { method: 'POST', token: agent }), 200);
  assert.is(await status('/operate', { method: 'POST', token: operator }), 200);
});

A('an agent token scoped to a task cannot act on another task', async () => {
  const { token } = await createToken(h.layout, { role: 'agent', taskId: 'task-a' }, clock);
  assert.is(await status('/tasks/task-a/complete', { method: 'POST', token }), 200);
  const r = await h.fetch('/tasks/task-b/complete', { method: 'POST', token });
  assert.equal([r.status, await r.json()], [403, { detail: "token is scoped to task 'task-a': task 'task-b' is not its task" }]);
  const other = await h.fetch('/task-op', { method: 'POST', token });
  assert.equal([other.status, await other.json()], [403, { detail: "token is scoped to task 'task-a': this endpoint is outside its task" }]);
  const own = await (await h.fetch('/tasks/task-a/complete', { method: 'POST', token })).json();
  assert.is(own.taskId, 'task-a');
});

A('public and hmac routes need no bearer token', async () => {
  assert.equal(await (await h.fetch('/open')).json(), { kind: 'anonymous', role: 'viewer', tenant: null, actor: 'anonymous' });
  assert.is((await (await h.fetch('/webhook', { method: 'POST', token: 'whatever' })).json()).kind, 'hmac');
});

const D = suite('authentication disabled');

D('SERVICE_AUTH_DISABLED passes every request as admin and warns loudly once', async () => {
  const lines: string[] = [];
  const log = createLogger({ json: true, stream: new Writable({ write(c, _e, cb) { lines.push(String(c)); cb(); } }) });
  const d = await startServer({ routes, log, auth: { disabled: true } });
  try {
    for (const [m, p] of [['POST', '/admin'], ['GET', '/read'], ['GET', '/'], ['GET', '/metrics']] as const) {
      assert.is((await d.fetch(p, { method: m })).status, 200, p);
    }
    const r = await d.fetch('/admin', { method: 'POST', token: 'garbage' });
    assert.equal(await r.json(), { kind: 'disabled', role: 'admin', tenant: null, actor: 'auth-disabled' });
    const warnings = lines.filter((l) => /AUTHENTICATION IS DISABLED/.test(l));
    assert.is(warnings.length, 1);
    assert.is(JSON.parse(warnings[0]!).level, 'warn');
  } finally {
    await d.close();
  }
});

A.run();
D.run();
