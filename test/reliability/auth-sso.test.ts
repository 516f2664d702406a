// Auth suite for single sign-on: every /auth route × {no credential, bad credential, expired session,
// revoked session, wrong role}, as bearer and as cookie. Protected routes answer 401/403 and change
// nothing; public routes never 401 and never 500.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sessionFor, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';
import { report } from './lib.ts';

const test = suite('auth: sso');
let w: SsoWorld;
const cred: Record<string, Record<string, string>> = {};
const stats = { requests: 0, refused_401: 0, refused_403: 0, public_ok: 0, routes: 0 };

/** [method, path, body, who may call it]: public, any signed-in caller, a user session, or admin. */
const ROUTES: [string, string, unknown, 'public' | 'signed-in' | 'session' | 'admin'][] = [
  ['GET', '/auth/providers', undefined, 'public'],
  ['GET', '/auth/login?provider=oidc', undefined, 'public'],
  ['GET', '/auth/oidc/callback?code=x&state=y', undefined, 'public'],
  ['POST', '/auth/saml/acs', { RelayState: 'x' }, 'public'],
  ['GET', '/auth/saml/metadata', undefined, 'public'],
  ['GET', '/auth/device', undefined, 'public'],
  ['POST', '/auth/cli/device', {}, 'public'],
  ['POST', '/auth/cli/token', { device_code: 'nope' }, 'public'],
  ['POST', '/auth/cli/authorize', { user_code: 'BBBB-BBBB' }, 'session'],
  ['GET', '/auth/me', undefined, 'signed-in'],
  ['GET', '/auth/group-mappings', undefined, 'signed-in'],
  ['PUT', '/auth/group-mappings', { mappings: [{ group: 'everyone', role: 'admin' }] }, 'admin'],
  ['GET', '/auth/users', undefined, 'admin'],
  ['POST', '/auth/logout', undefined, 'signed-in'],
];

test.before(async () => {
  w = await startSsoWorld();
  const sdd = join(w.repo.dir, '.sdd');
  const viewer = await sessionFor(w, 'carol');
  const revoked = await sessionFor(w, 'bob');
  const res = await fetch(`${w.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${revoked}` } });
  assert.is(res.status, 200);
  // An expired session: a real sid and user, signed with the server's own key, `exp` in the past.
  const key = Buffer.from(readFileSync(join(sdd, 'secrets', 'session.key'), 'utf8').trim(), 'hex');
  const live = JSON.parse(readFileSync(join(sdd, 'secrets', 'sso-sessions.json'), 'utf8')).sessions.find((s: { revoked_at: string | null }) => !s.revoked_at);
  const now = Math.floor(Date.now() / 1000);
  const expired = await new SignJWT({ sid: live.sid }).setProtectedHeader({ alg: 'HS256' }).setIssuer('svc').setAudience('svc-session')
    .setSubject(live.user_id).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(key);
  const foreign = await new SignJWT({ sid: live.sid }).setProtectedHeader({ alg: 'HS256' }).setIssuer('svc').setAudience('svc-session')
    .setSubject(live.user_id).setIssuedAt(now).setExpirationTime(now + 3600).sign(new Uint8Array(32));
  for (const [name, token] of Object.entries({ expired, revoked, foreign, garbage: 'a.b.c', unknown: 'svc_not-a-token' })) {
    cred[`${name} bearer`] = { authorization: `Bearer ${token}` };
    cred[`${name} cookie`] = { cookie: `svc_session=${token}` };
  }
  cred.none = {};
  cred['viewer session'] = { authorization: `Bearer ${viewer}` };
});
test.after(async () => { await w.stop(); });

const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
  stats.requests++;
  const res = await fetch(w.url + path, {
    method, redirect: 'manual',
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { /* html, xml or empty */ }
  return { status: res.status, json, text };
};
const mappingsFile = () => readFileSync(join(w.repo.dir, '.sdd', 'auth', 'group-mappings.json'), 'utf8');

test('protected routes refuse no, bad, foreign, expired and revoked credentials (bearer or cookie) with 401', async () => {
  const before = mappingsFile();
  const wrong: string[] = [];
  for (const [method, path, body, who] of ROUTES.filter((r) => r[3] !== 'public')) {
    stats.routes++;
    for (const [label, headers] of Object.entries(cred).filter(([l]) => l !== 'viewer session')) {
      const res = await call(method, path, body, headers);
      if (res.status === 401 && typeof res.json?.detail === 'string') stats.refused_401++;
      else wrong.push(`${method} ${path} (${who}) [${label}]: ${res.status} ${res.text.slice(0, 100)}`);
    }
  }
  assert.equal(wrong, []);
  assert.is(mappingsFile(), before, 'no refused call changed the mappings');
});

test('a viewer session: 403 on admin routes, 401 nowhere it is signed in, its own profile on /auth/me', async () => {
  const before = mappingsFile();
  const viewer = cred['viewer session']!;
  for (const [method, path, body] of ROUTES.filter((r) => r[3] === 'admin')) {
    const res = await call(method, path, body, viewer);
    assert.is(res.status, 403, `${method} ${path}: ${res.text}`);
    assert.is(res.json.detail, 'admin role required');
    stats.refused_403++;
  }
  const me = await call('GET', '/auth/me', undefined, viewer);
  assert.is(me.json.role, 'viewer');
  assert.is(me.json.email, 'carol@example.test');
  assert.is((await call('GET', '/auth/group-mappings', undefined, viewer)).status, 200);
  assert.is((await call('POST', '/auth/cli/authorize', { user_code: 'BBBB-BBBB' }, viewer)).status, 400, 'a viewer may approve her own CLI');
  const token = await call('POST', '/auth/cli/authorize', { user_code: 'BBBB-BBBB' }, { authorization: `Bearer ${w.svc.token}` });
  assert.is(token.status, 401, 'an admin token is not a user session');
  assert.is(mappingsFile(), before);
});

test('public routes answer every credential without 401 or 500', async () => {
  const wrong: string[] = [];
  for (const [method, path, body] of ROUTES.filter((r) => r[3] === 'public')) {
    stats.routes++;
    for (const [label, headers] of Object.entries(cred)) {
      const res = await call(method, path, body, headers);
      if (res.status !== 401 && res.status < 500) stats.public_ok++;
      else wrong.push(`${method} ${path} [${label}]: ${res.status} ${res.text.slice(0, 100)}`);
    }
  }
  assert.equal(wrong, []);
});

test('a write from another origin with a good session cookie is refused (the cookie is not used)', async () => {
  const admin = await sessionFor(w, 'alice');
  const body = { mappings: [{ group: 'everyone', role: 'admin' }] };
  const cross = await call('PUT', '/auth/group-mappings', body, { cookie: `svc_session=${admin}`, origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' });
  assert.is(cross.status, 401);
  assert.not.match(mappingsFile(), 'everyone');
  report('auth-sso', stats);
});

test.run();
