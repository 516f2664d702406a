// Node tokens with a manual clock: expiry and revocation hold for tokens already verified once.
import { SignJWT } from 'jose';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNodeTokens } from '../../src/cluster/index.ts';
import { HttpError } from '../../src/lib/http-error.ts';
import { manualClock } from '../../src/lib/clock.ts';

const SECRET = 'node-token-secret-0123456789abcdef-0123';
const fresh = () => { const clock = manualClock(); return { clock, t: createNodeTokens({ secret: SECRET, clock, newJti: () => `jti-${Math.random()}`, expiryHours: 24 }) }; };
const refused = async (p: Promise<unknown>): Promise<string> => {
  try { await p; } catch (e) { assert.instance(e, HttpError); assert.is((e as HttpError).status, 401); return (e as HttpError).detail; }
  throw new Error('expected a 401');
};

test('a verified token expires on time even though its check is remembered', async () => {
  const { clock, t } = fresh();
  const { token } = await t.issue('aaaaaaaaaaaa', ['node:heartbeat']);
  const p = await t.principal(token);
  assert.equal([p?.kind, p?.role, p?.nodeId, p?.scopes, p?.actor], ['node', 'agent', 'aaaaaaaaaaaa', ['node:heartbeat'], 'node:aaaaaaaaaaaa']);
  clock.advance(24 * 3600 * 1000 - 1000);
  assert.ok(await t.principal(token));
  clock.advance(1000);
  assert.is(await refused(t.principal(token)), 'Invalid or expired token');
});

test('revocation by jti and by node reaches tokens already verified; later tokens of the node work', async () => {
  const { clock, t } = fresh();
  const a = await t.issue('aaaaaaaaaaaa', ['node:heartbeat']);
  const b = await t.issue('bbbbbbbbbbbb', ['node:heartbeat']);
  await t.principal(a.token); await t.principal(b.token);
  t.revokeJti(a.jti);
  assert.is(await refused(t.principal(a.token)), 'Token has been revoked');
  t.revokeNode('bbbbbbbbbbbb');
  assert.is(await refused(t.principal(b.token)), 'Token has been revoked');
  clock.advance(1);
  assert.ok(await t.principal((await t.issue('bbbbbbbbbbbb', ['node:heartbeat'])).token), 'issued after the revocation, in the same second');
  // A token of the node without iat_ms (signed elsewhere with the secret) issued in the revoked second stays revoked.
  const old = await new SignJWT({ scopes: ['node:heartbeat'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('bbbbbbbbbbbb').setJti('j-old')
    .setIssuedAt(Math.floor(clock.now() / 1000)).setExpirationTime(Math.floor(clock.now() / 1000) + 3600).sign(new TextEncoder().encode(SECRET));
  assert.is(await refused(t.principal(old)), 'Token has been revoked');
});

test('the secret holds every scope; other algorithms and non-node JWTs are told apart', async () => {
  const { t } = fresh();
  assert.equal((await t.principal(SECRET))?.scopes, ['node:register', 'node:heartbeat', 'node:admin']);
  assert.is(await t.principal('svc_some-api-token'), undefined);
  const session = await new SignJWT({ sid: 'x' }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').sign(new TextEncoder().encode('other-key'));
  assert.is(await t.principal(session), undefined, 'an SSO session JWT is left to its resolver');
  const key = new TextEncoder().encode(SECRET);
  const claims = { sub: 'aaaaaaaaaaaa', scopes: ['node:admin'], jti: 'j' };
  const hs384 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS384' }).setIssuedAt().setExpirationTime('1h').sign(key);
  assert.is(await refused(t.principal(hs384)), 'Invalid or expired token');
  const noExp = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().sign(key);
  assert.is(await refused(t.principal(noExp)), 'Invalid or expired token');
  const badScope = await new SignJWT({ ...claims, scopes: ['node:root'] }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key);
  assert.is(await refused(t.principal(badScope)), 'Invalid or expired token');
});

test.run();
