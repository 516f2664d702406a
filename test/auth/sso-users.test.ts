// Users, roles and group mappings: identities never linked by email, a mapping change moves every
// user's role at once, lands in refs/sdd/state, and every login, logout, role and mapping change is audited.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/server.ts';
import { waitFor } from '../reliability/lib.ts';
import { samlSignIn, sessionFor, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';

const test = suite('sso: users and mappings');
let w: SsoWorld;
test.before(async () => { w = await startSsoWorld(); });
test.after(async () => { await w.stop(); });

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const api = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const r = await fetch(w.url + path, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const audit = () => readdirSync(join(w.repo.dir, '.sdd', 'audit')).filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(join(w.repo.dir, '.sdd', 'audit', f), 'utf8').trim().split('\n')).map((l) => JSON.parse(l));

test('the same email through OIDC and SAML is two users; /auth/users is admin only and lists both', async () => {
  const alice = await sessionFor(w, 'alice');
  await sessionFor(w, 'bob');
  const saml = await samlSignIn(w, 'bob');
  assert.is(saml.status, 303);
  const users = await api('GET', '/auth/users', as(alice));
  assert.is(users.status, 200);
  const bobs = users.body.users.filter((u: { email: string }) => u.email === 'bob@example.test');
  assert.equal(bobs.map((u: { provider: string }) => u.provider).sort(), ['oidc', 'saml']);
  assert.is(new Set(bobs.map((u: { id: string }) => u.id)).size, 2);
  assert.is((await api('GET', '/auth/users', as(saml.session!))).status, 403, 'an operator is not admin');
  const secrets = join(w.repo.dir, '.sdd', 'secrets');
  for (const f of ['sso-users.json', 'sso-sessions.json', 'session.key']) assert.is(statSync(join(secrets, f)).mode & 0o777, 0o600, f);
});

test('a mapping change moves roles at once (even of open sessions), is committed and audited; logout too', async () => {
  const alice = await sessionFor(w, 'alice');
  const bob = await sessionFor(w, 'bob');
  assert.is((await api('GET', '/auth/me', as(bob))).body.role, 'operator');
  const bad = await api('PUT', '/auth/group-mappings', as(alice), { mappings: [{ group: 'eng', role: 'root' }] });
  assert.is(bad.status, 400);
  assert.is(bad.body.detail, 'Invalid role: root');
  const put = await api('PUT', '/auth/group-mappings', as(alice), { mappings: [{ group: 'eng-admins', role: 'admin' }, { group: 'eng', role: 'viewer' }] });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is(put.body.mappings_count, 2);
  assert.is((await api('GET', '/auth/me', as(bob))).body.role, 'viewer', 'bob\'s open session is a viewer now');
  assert.is((await api('POST', '/tasks', as(bob), { title: 'x' })).status, 403);
  assert.equal((await api('GET', '/auth/group-mappings', as(bob))).body.mappings, [{ group: 'eng', role: 'viewer' }, { group: 'eng-admins', role: 'admin' }]);

  // The state commit follows within its interval (a commit under way is not in the backlog figure: poll the ref).
  const committed = () => JSON.parse(execFileSync('git', ['show', 'refs/sdd/state:.sdd/auth/group-mappings.json'], { cwd: w.repo.dir, encoding: 'utf8' }));
  const landed = await waitFor(() => committed().mappings.some((m: { group: string; role: string }) => m.group === 'eng' && m.role === 'viewer'), 15_000);
  assert.ok(landed, `refs/sdd/state has ${JSON.stringify(committed())}`);
  const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', 'refs/sdd/state'], { cwd: w.repo.dir, encoding: 'utf8' });
  assert.not.match(tree, 'secrets/', 'users and sessions are never committed');

  assert.is((await api('POST', '/auth/logout', as(bob))).status, 200);
  const log = audit();
  const change = log.find((r) => r.action === 'auth.mappings_update');
  assert.ok(change);
  assert.equal(change.details.changed, [{ group: 'eng', from: 'operator', to: 'viewer' }]);
  const roles = log.filter((r) => r.action === 'auth.role_change' && r.details.subject === 'bob');
  assert.ok(roles.some((r) => r.details.from === 'operator' && r.details.to === 'viewer' && r.details.email === 'bob@example.test'));
  assert.ok(log.some((r) => r.action === 'auth.logout' && r.details.subject === 'bob' && r.details.provider === 'oidc'));
  assert.ok(log.filter((r) => r.action === 'auth.login').every((r) => r.details.issuer && r.details.subject));
  const verify = await runCli(['audit', 'verify'], { cwd: w.repo.dir });
  assert.is(verify.code, 0, verify.stderr);
  assert.match(verify.stdout, 'audit chain ok');
});

test.run();
