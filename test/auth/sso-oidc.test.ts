// OIDC sign-in against a real OpenID provider (oidc-provider, in process): the good path with PKCE,
// and every way a callback or ID token can be wrong → 400 and no session.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { oidcSignIn, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';
import { CookieJar, jarFetch } from '../helpers/oidc-idp.ts';

const test = suite('sso: oidc');
let w: SsoWorld;
test.before(async () => { w = await startSsoWorld({ saml: false }); });
test.after(async () => { await w.stop(); });
test.after.each(() => { w.oidc.rewrite = null; });

const sessions = () => {
  try {
    return (JSON.parse(readFileSync(join(w.repo.dir, '.sdd', 'secrets', 'sso-sessions.json'), 'utf8')) as { sessions: unknown[] }).sessions.length;
  } catch { return 0; }
};
const audit = () => readdirSync(join(w.repo.dir, '.sdd', 'audit')).filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(join(w.repo.dir, '.sdd', 'audit', f), 'utf8').trim().split('\n')).map((l) => JSON.parse(l));

/** A sign-in that must fail: 400 with a detail matching `why`, no session cookie, no session stored. */
async function refused(why: RegExp, run: () => Promise<{ status: number; session?: string; detail?: string }>) {
  const before = sessions();
  const l = await run();
  assert.is(l.status, 400, `status ${l.status} ${l.detail ?? ''}`);
  assert.match(l.detail ?? "", why, l.detail);
  assert.is(l.session, undefined, 'no session cookie');
  assert.is(sessions(), before, 'no session stored');
}

test('alice signs in with code + PKCE S256, state and nonce, lands on the signed-in page, and /auth/me shows her as admin', async () => {
  let auth: URL | undefined;
  const l = await oidcSignIn(w, 'alice', { bendAuthUrl: (u) => { auth = u; } });
  assert.is(auth!.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(auth!.searchParams.get('code_challenge') && auth!.searchParams.get('state') && auth!.searchParams.get('nonce'));
  assert.is(l.status, 303);
  assert.is(l.location, '/auth/device');
  assert.ok(l.session);
  const me = await (await fetch(`${w.url}/auth/me`, { headers: { cookie: `svc_session=${l.session}` } })).json();
  assert.is(me.email, 'alice@example.test');
  assert.is(me.role, 'admin', 'eng-admins → admin');
  assert.equal(me.groups, ['eng', 'eng-admins']);
  assert.is(me.provider, 'oidc');
  assert.is(me.issuer, w.oidc.issuer);
  const login = audit().find((r) => r.action === 'auth.login' && r.details.subject === 'alice');
  assert.ok(login, 'the login is audited');
  assert.is(login.details.issuer, w.oidc.issuer);
  assert.is(login.details.email, 'alice@example.test');
});

test('a local `next` is honoured; an absolute or protocol-relative one is not', async () => {
  assert.is((await oidcSignIn(w, 'bob', { next: '/tasks?limit=1' })).location, '/tasks?limit=1');
  assert.is((await oidcSignIn(w, 'bob', { next: '//evil.test/x' })).location, '/auth/device');
  assert.is((await oidcSignIn(w, 'bob', { next: 'https://evil.test/' })).location, '/auth/device');
});

test('a wrong state → 400, no session', async () => {
  await refused(/state/i, () => oidcSignIn(w, 'bob', { bendCallback: (u) => u.searchParams.set('state', 'not-the-state') }));
});

test('a replayed callback (state already used) → 400, no session', async () => {
  let callback: URL | undefined;
  let jar: CookieJar | undefined;
  const first = await oidcSignIn(w, 'bob', { bendCallback: (u) => { callback = new URL(u); } });
  assert.is(first.status, 303);
  jar = first.jar;
  await refused(/state/i, async () => {
    const res = await jarFetch(jar!, callback!.href);
    return { status: res.status, detail: ((await res.json()) as { detail: string }).detail, ...(res.headers.getSetCookie().some((c) => c.startsWith('svc_session=')) ? { session: 'set' } : {}) };
  });
});

test('a callback in another browser (no login cookie) → 400, no session', async () => {
  await refused(/another browser/, async () => {
    let callback: URL | undefined;
    const l = await oidcSignIn(w, 'bob', { bendCallback: (u) => { callback = new URL(u); u.searchParams.set('state', 'x'); } });
    assert.is(l.status, 400);
    const res = await fetch(callback!.href, { redirect: 'manual' });
    return { status: res.status, detail: ((await res.json()) as { detail: string }).detail };
  });
});

test('a wrong nonce (changed in the authorization request) → 400, no session', async () => {
  await refused(/nonce/i, () => oidcSignIn(w, 'bob', { bendAuthUrl: (u) => u.searchParams.set('nonce', 'attacker-chosen-nonce') }));
});

test('an expired ID token (re-signed by the IdP key) → 400, no session', async () => {
  w.oidc.rewrite = (t, idp) => idp.resign(t, (c) => { c.iat = Math.floor(Date.now() / 1000) - 7200; c.exp = Math.floor(Date.now() / 1000) - 3600; });
  await refused(/exp|expired|timestamp/i, () => oidcSignIn(w, 'bob'));
});

test('an ID token for another audience → 400, no session', async () => {
  w.oidc.rewrite = (t, idp) => idp.resign(t, (c) => { c.aud = 'some-other-client'; });
  await refused(/aud/i, () => oidcSignIn(w, 'bob'));
});

test('an ID token from another issuer → 400, no session', async () => {
  w.oidc.rewrite = (t, idp) => idp.resign(t, (c) => { c.iss = 'http://127.0.0.1:1'; });
  await refused(/iss/i, () => oidcSignIn(w, 'bob'));
});

test('a tampered ID token (claims changed, signature kept) → 400, no session: the signature is checked', async () => {
  w.oidc.rewrite = (t) => {
    const [h, p, s] = t.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    claims.email = 'mallory@example.test';
    return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
  };
  await refused(/signature/i, () => oidcSignIn(w, 'bob'));
});

test('an IdP error, a missing code, an unknown provider, a disabled provider', async () => {
  const get = async (path: string) => { const r = await fetch(w.url + path, { redirect: 'manual' }); return { status: r.status, body: await r.json().catch(() => null) }; };
  const err = await get('/auth/oidc/callback?error=access_denied&error_description=nope&state=x');
  assert.is(err.status, 400);
  assert.match(err.body.detail, /access_denied/);
  assert.is((await get('/auth/oidc/callback?state=abc')).status, 400);
  assert.is((await get('/auth/oidc/callback')).status, 400);
  assert.is((await get('/auth/login?provider=kerberos')).status, 422);
  const saml = await get('/auth/login?provider=saml');
  assert.is(saml.status, 400);
  assert.is(saml.body.detail, "Authentication provider 'saml' is not enabled");
  assert.is((await get('/auth/saml/metadata')).status, 404);
});

test.run();
