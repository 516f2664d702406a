import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '../../src/auth/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { runCli } from '../helpers/server.ts';
import { assertError, boot, type Api } from './support.ts';

// Tenant scope and quotas over HTTP with tenant-bound tokens.
let a: Api;
let tokA = '', tokB = '', viewer = '';
const T = suite('tenants over HTTP');
T.before(async () => {
  a = await boot({ before: (repo) => {
    mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
    writeFileSync(join(repo.dir, '.sdd', 'tenants.json'), JSON.stringify({ default: {}, a: { max_tasks: 3 }, b: {}, c: { max_tasks: 5 }, d: {} }, null, 2) + '\n');
  } });
  const cli = await runCli(['token', 'create', '--role', 'agent', '--tenant', 'a', '--json'], { cwd: a.repo.dir });
  assert.is(cli.code, 0, cli.stderr);
  tokA = JSON.parse(cli.stdout).token;
  const layout = sddLayout(a.repo.dir);
  tokB = (await createToken(layout, { role: 'agent', tenant: 'b' }, systemClock)).token;
  viewer = (await createToken(layout, { role: 'viewer', tenant: 'b' }, systemClock)).token;
});
T.after(async () => { await a?.close(); });
const bearer = (t: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${t}`, ...extra });
const asA = (m: string, p: string, body?: unknown, h: Record<string, string> = {}) => a.s.api(m, p, body, bearer(tokA, h));

T('a tenant-bound token creates in its tenant and cannot read, list, claim or count another tenant\'s tasks', async () => {
  const mine = await asA('POST', '/tasks', { title: 'for a', role: 'shared' });
  assert.is(mine.status, 201);
  assert.is(mine.body.tenant, 'a');
  const theirs = (await a.s.api('POST', '/tasks', { title: 'for b', role: 'shared' }, bearer(tokB))).body;
  assert.is(theirs.tenant, 'b');
  const bOnly = (await a.s.api('POST', '/tasks', { title: 'b only', role: 'bonly' }, bearer(tokB))).body;

  assertError(await asA('GET', `/tasks/${theirs.id}`), 404, `Task '${theirs.id}' not found`);
  assertError(await asA('POST', `/tasks/${theirs.id}/claim`), 404);
  assertError(await asA('POST', `/tasks/${theirs.id}/complete`, { result_summary: 'x' }), 404);
  assertError(await asA('PATCH', `/tasks/${theirs.id}`, { priority: 0 }), 404);
  assertError(await asA('GET', `/tasks/${theirs.id}/progress`), 404);
  assertError(await asA('GET', '/tasks/next/bonly'), 404, "No open tasks for role 'bonly'");
  const batch = await asA('POST', '/tasks/claim-batch', { task_ids: [theirs.id] });
  assert.equal(batch.body.claimed, []);
  assert.equal(batch.body.failed.map((f: any) => f.task_id), [theirs.id]);

  const list = await asA('GET', '/tasks?limit=100');
  assert.equal(list.body.tasks.map((t: any) => t.id), [mine.body.id]);
  assert.equal((await asA('GET', '/tasks')).body.map((t: any) => t.id), [mine.body.id]);
  assert.equal((await asA('GET', '/tasks/search')).body.tasks.map((t: any) => t.id), [mine.body.id]);
  assert.is((await asA('GET', '/tasks/counts')).body.total, 1);
  assert.equal((await asA('GET', '/tasks/graph')).body.nodes.map((n: any) => n.id), [mine.body.id]);
  assert.is((await asA('GET', '/tasks/next/shared')).body.id, mine.body.id, 'next only sees its own tenant');
  assert.is((await a.s.api('GET', `/tasks/${theirs.id}`, undefined, { 'x-tenant-id': 'b' })).body.status, 'open');
  void bOnly;
});

T('naming another tenant with a bound token answers 403 (header, query or body)', async () => {
  for (const [m, p] of [['GET', '/tasks?tenant=b'], ['GET', '/tasks/counts?tenant=b'], ['GET', '/tasks/archive?tenant=b'], ['GET', '/tasks/graph?tenant=b'], ['GET', '/tasks?limit=5&tenant=b']]) {
    assertError(await asA(m!, p!), 403, /not accessible/);
  }
  for (const p of ['/tasks/search?tenant=b', '/tasks/next/shared?tenant=b', `/tasks/${'01zzzzzzzzzzzzzzzzzzzzzzzz'}?tenant=b`]) assertError(await asA('GET', p), 403, /not accessible/);
  assertError(await asA('POST', '/tasks/claim-batch?tenant=b', { task_ids: ['01zzzzzzzzzzzzzzzzzzzzzzzz'] }), 403);
  assertError(await asA('GET', '/tasks/counts', undefined, { 'x-tenant-id': 'b' }), 403);
  assertError(await asA('GET', '/tasks/search', undefined, { 'x-tenant-id': 'b' }), 403);
  assertError(await asA('POST', '/tasks', { title: 'sneaky' }, { 'x-tenant-id': 'b' }), 403);
  assertError(await asA('GET', '/tasks/next/shared', undefined, { 'x-tenant-id': 'b' }), 403);
  assertError(await asA('POST', '/tasks', { title: 'sneaky body', tenant: 'b' }), 403);
  assert.is((await asA('GET', '/tasks/counts?tenant=a')).status, 200, 'naming its own tenant is fine');
});

T('an unbound (admin) token may name any tenant; an unknown tenant answers 404', async () => {
  const inB = await a.s.api('POST', '/tasks', { title: 'admin into b' }, { 'x-tenant-id': 'b' });
  assert.is(inB.status, 201);
  assert.is(inB.body.tenant, 'b');
  const viaBody = await a.s.api('POST', '/tasks', { title: 'admin into b by body', tenant: 'b' });
  assert.is(viaBody.status, 201);
  assert.is(viaBody.body.tenant, 'b', 'the body\'s tenant is honoured');
  assert.is((await a.s.api('GET', `/tasks/${inB.body.id}`, undefined, { 'x-tenant-id': 'b' })).status, 200);
  assertError(await a.s.api('GET', `/tasks/${inB.body.id}`), 404, `Task '${inB.body.id}' not found`);
  assert.is((await a.s.api('GET', `/tasks/${inB.body.id}?tenant=b`)).status, 200);
  const found = (await a.s.api('GET', '/tasks/search?tenant=b&per_page=100')).body.tasks.map((t: any) => t.id);
  assert.ok(found.includes(inB.body.id), 'search honours ?tenant=');
  assertError(await a.s.api('GET', '/tasks/counts?tenant=nope'), 404, /unknown tenant 'nope'/);
  assertError(await a.s.api('POST', '/tasks', { title: 'x' }, { 'x-tenant-id': 'nope' }), 404, /unknown tenant/);
  assertError(await a.s.api('POST', '/tasks', { title: 'x', tenant: 'nope' }), 404, /unknown tenant/);
  assertError(await a.s.api('GET', '/tasks?tenant=nope'), 404);
  assertError(await a.s.api('POST', '/tasks', { title: 'x', tenant: 'a' }, { 'x-tenant-id': 'b' }), 422, /tenant/);
  assertError(await a.s.api('POST', '/tasks/batch', { tasks: [{ title: 'x1', tenant: 'a' }, { title: 'x2', tenant: 'b' }] }), 422, /several tenants/);
});

T('tenant quota: active tasks beyond max_tasks answer 429 naming the command that raises it, without Retry-After; finished work frees the slot', async () => {
  // Tenant a allows 3 active tasks and holds one (claimed) already.
  assert.is((await asA('POST', '/tasks', { title: 'a2' })).status, 201);
  const batch = await asA('POST', '/tasks/batch', { tasks: [{ title: 'a3' }, { title: 'a4' }] });
  assert.is(batch.status, 429, 'a batch counts every task it would create');
  assert.is(batch.headers.get('retry-after'), null, 'waiting alone does not help');
  const third = await asA('POST', '/tasks', { title: 'a3' });
  assert.is(third.status, 201);
  const over = await asA('POST', '/tasks', { title: 'a4' });
  assertError(over, 429, /max_tasks limit \(3\); .*svc tenant set a --max-tasks/);
  assert.is(over.headers.get('retry-after'), null, 'no Retry-After');
  assert.is((await asA('GET', '/tasks/counts')).body.total, 3);
  assert.is((await a.s.api('POST', '/tasks', { title: 'other tenants are unaffected' }, bearer(tokB))).status, 201);
  const done = await asA('POST', `/tasks/${third.body.id}/fail`, { reason: 'frees a slot' });
  assert.is(done.body.status, 'failed');
  assert.is((await asA('POST', '/tasks', { title: 'a4' })).status, 201);
});

T('32 concurrent creates against a quota of 5: exactly 5 created, 27 answer 429', async () => {
  const res = await Promise.all(Array.from({ length: 32 }, (_, i) => a.s.api('POST', '/tasks', { title: `c${i}` }, { 'x-tenant-id': 'c' })));
  const codes = res.map((r) => r.status);
  assert.is(codes.filter((c) => c === 201).length, 5, codes.join(','));
  assert.is(codes.filter((c) => c === 429).length, 27);
  assert.is((await a.s.api('GET', '/tasks/counts?tenant=c')).body.total, 5);
});

T('file ownership is per tenant: another tenant holding the same path neither blocks a claim nor is named', async () => {
  const asB = (m: string, p: string, body?: unknown) => a.s.api(m, p, body, bearer(tokB));
  const held = (await asB('POST', '/tasks', { title: 'b owns it', role: 'own', owned_files: ['src/shared.ts'] })).body;
  assert.is((await asB('POST', `/tasks/${held.id}/claim`)).status, 200);
  const asC = (m: string, p: string, body?: unknown) => a.s.api(m, p, body, { 'x-tenant-id': 'd' });
  const mine = (await asC('POST', '/tasks', { title: 'c owns it too', role: 'own', owned_files: ['src/shared.ts'] })).body;
  const claimed = await asC('POST', `/tasks/${mine.id}/claim`);
  assert.is(claimed.status, 200, JSON.stringify(claimed.body));
  // Within one tenant the conflict stands, and names only that tenant's task.
  const second = (await asC('POST', '/tasks', { title: 'c again', role: 'own', owned_files: ['src/shared.ts'] })).body;
  const refused = await asC('POST', `/tasks/${second.id}/claim`);
  assert.is(refused.status, 409);
  assert.match(refused.body.detail, new RegExp(mine.id));
  assert.not.match(refused.body.detail, new RegExp(held.id));
});

T('roles: a viewer cannot write, an agent cannot drain', async () => {
  assertError(await a.s.api('POST', '/tasks', { title: 'v' }, bearer(viewer)), 403, /viewer role/);
  assert.is((await a.s.api('GET', '/tasks/counts', undefined, bearer(viewer))).status, 200);
  assertError(await asA('POST', '/drain'), 403, 'admin role required');
  assert.is((await a.s.api('GET', '/drain')).body.draining, false);
});

T('totals across tenants: /health anonymous has none, /metrics is for unbound admins and operators, /drain counts the caller\'s tenant', async () => {
  const anon = await fetch(`${a.s.url}/health`);
  assert.equal(Object.keys((await anon.json()) as object).sort(), ['status', 'uptime_s', 'version']);
  assertError(await a.s.api('GET', '/metrics', undefined, bearer(viewer)), 403, /operate|role/);
  const bound = (await createToken(sddLayout(a.repo.dir), { role: 'operator', tenant: 'b' }, systemClock)).token;
  assertError(await a.s.api('GET', '/metrics', undefined, bearer(bound)), 403, /not bound to a tenant/);
  assert.is((await a.s.api('GET', '/metrics')).status, 200);
  const all = (await a.s.api('GET', '/drain')).body.active_tasks;
  const mine = (await a.s.api('GET', '/drain', undefined, bearer(bound))).body.active_tasks;
  const counts = (await a.s.api('GET', '/tasks/counts', undefined, bearer(bound))).body;
  assert.is(mine, counts.claimed + counts.in_progress);
  assert.ok(all > mine, `every tenant: ${all}, tenant b: ${mine}`);
});

T.run();
