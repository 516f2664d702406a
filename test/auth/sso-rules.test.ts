// The pure rules of SSO with plain values: roles from groups, mapping checks, the device-code table and
// polling, user codes, login state expiry, redirect targets, cookies; sessions with a manual clock.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEVICE_MACHINE, deviceStep, formatUserCode, normalizeUserCode, poll, USER_CODE_ALPHABET, type DeviceEvent, type DeviceRecord, type DeviceState } from '../../src/auth/sso/device.ts';
import { checkMappings, diffMappings, roleFromGroups } from '../../src/auth/sso/policy.ts';
import { PendingLogins, safeNext } from '../../src/auth/sso/logins.ts';
import { readCookie, sessionCookieOf } from '../../src/auth/sso/cookie.ts';
import { AttemptLimiter, DeviceRegistry } from '../../src/auth/sso/devices.ts';
import { SessionRegistry } from '../../src/auth/sso/sessions.ts';
import { idpFromMetadata } from '../../src/auth/sso/saml.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { HttpError } from '../../src/lib/http-error.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeTempDir } from '../helpers/repo.ts';
import type { IncomingMessage } from 'node:http';

const test = suite('sso rules');
const M = [{ group: 'admins', role: 'admin' as const }, { group: 'eng', role: 'operator' as const }, { group: 'bots', role: 'agent' as const }];

test('role = highest mapped group, else the default; email never matters', () => {
  assert.is(roleFromGroups(['eng', 'admins'], M, 'viewer'), 'admin');
  assert.is(roleFromGroups(['bots', 'eng'], M, 'viewer'), 'operator');
  assert.is(roleFromGroups(['bots'], M, 'viewer'), 'agent');
  assert.is(roleFromGroups(['unknown'], M, 'viewer'), 'viewer');
  assert.is(roleFromGroups([], M, 'agent'), 'agent');
});

test('mappings: invalid role → 400 "Invalid role: <r>", duplicates and empty groups refused, sorted by group', () => {
  const bad = (input: { group: string; role: string }[]) => { try { checkMappings(input); return null; } catch (e) { return e as HttpError; } };
  assert.is(bad([{ group: 'x', role: 'superuser' }])?.detail, 'Invalid role: superuser');
  assert.is(bad([{ group: 'x', role: 'Admin' }])?.status, 400);
  assert.is(bad([{ group: 'x', role: 'admin' }, { group: 'x', role: 'viewer' }])?.status, 400);
  assert.is(bad([{ group: ' ', role: 'admin' }])?.status, 400);
  assert.equal(checkMappings([{ group: 'b', role: 'viewer' }, { group: 'a', role: 'admin' }]).map((m) => m.group), ['a', 'b']);
  assert.equal(diffMappings(M, [{ group: 'admins', role: 'operator' }, { group: 'new', role: 'viewer' }]), {
    added: [{ group: 'new', role: 'viewer' }], removed: [M[1], M[2]], changed: [{ group: 'admins', from: 'admin', to: 'operator' }],
  });
});

test('device table: every (state, event) pair is either the listed transition or refused', () => {
  const states = Object.keys(DEVICE_MACHINE) as DeviceState[];
  const events: DeviceEvent[] = ['authorize', 'redeem', 'expire'];
  const allowed = new Set(['pending/authorize>authorized', 'pending/expire>expired', 'authorized/redeem>complete', 'authorized/expire>expired']);
  for (const s of states) for (const e of events) {
    const to = deviceStep(s, e);
    assert.is(to !== null, [...allowed].some((a) => a.startsWith(`${s}/${e}>`)), `${s} + ${e}`);
    if (to) assert.ok(allowed.has(`${s}/${e}>${to}`));
  }
});

test('poll: pending, slow_down (+5 s) when faster than the interval, complete once, expired after 10 minutes', () => {
  const rec: DeviceRecord = { deviceCode: 'd', userCode: 'BCDF-GHJK', state: 'pending', createdAt: 0, expiresAt: 600_000, intervalS: 5, lastPollAt: null, clientName: null, userId: null };
  const a = poll(rec, 1000);
  assert.is(a.answer, 'pending');
  const b = poll(a.next!, 3000);
  assert.is(b.answer, 'slow_down');
  assert.is(b.next!.intervalS, 10);
  assert.is(poll(b.next!, 12_000).answer, 'slow_down', 'the new interval counts from the last poll');
  assert.is(poll({ ...b.next!, state: 'authorized' }, 20_000).answer, 'complete');
  assert.is(poll({ ...b.next!, state: 'authorized' }, 20_000).next, null, 'redeemed: forgotten');
  assert.is(poll(rec, 600_000).answer, 'expired');
});

test('user codes: XXXX-XXXX over consonants without ambiguous letters; typing is forgiven', () => {
  assert.not.match(USER_CODE_ALPHABET, /[AEIOU01]/);
  const code = formatUserCode(Buffer.from([0, 1, 2, 3, 19, 20, 255, 128]));
  assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  assert.is(normalizeUserCode(code.toLowerCase().replace('-', ' ')), code);
  assert.is(normalizeUserCode('ABCD-EFGH'), null, 'vowels are never in a code');
  assert.is(normalizeUserCode('BCD'), null);
});

test('device registry: codes are single use, unknown codes 400, the entry limit blocks after ten failures', () => {
  const clock = manualClock();
  const reg = new DeviceRegistry({ clock });
  const rec = reg.start('cli');
  assert.throws(() => reg.authorize('BBBB-BBBB', 'u1'), (e: HttpError) => e.status === 400);
  reg.authorize(rec.userCode, 'u1');
  assert.throws(() => reg.authorize(rec.userCode, 'u2'), (e: HttpError) => e.status === 400, 'already authorized');
  assert.is(reg.poll(rec.deviceCode).answer, 'complete');
  assert.is(reg.poll(rec.deviceCode).answer, 'expired', 'single use');
  const late = reg.start(null);
  clock.advance(600_000);
  assert.throws(() => reg.authorize(late.userCode, 'u1'), (e: HttpError) => e.status === 400, 'expired');
  const lim = new AttemptLimiter(10, 600_000);
  for (let i = 0; i < 10; i++) { assert.is(lim.blocked('ip:x', 0), null); lim.fail('ip:x', 0); }
  assert.is(lim.blocked('ip:x', 1000), 599);
  assert.is(lim.blocked('ip:x', 600_000), null, 'the window passes');
});

test('login state: usable once, gone after 10 minutes; next only as a local path', () => {
  const clock = manualClock();
  const p = new PendingLogins(clock);
  p.put('s1', { provider: 'oidc', binding: 'b', next: '/' });
  assert.ok(p.take('s1'));
  assert.is(p.take('s1'), undefined, 'single use');
  p.put('s2', { provider: 'oidc', binding: 'b', next: '/' });
  clock.advance(600_000);
  assert.is(p.take('s2'), undefined, 'expired after 10 minutes');
  for (const bad of ['//evil.test', 'https://evil.test', '/\\evil.test', 'relative', '/a\r\nSet-Cookie: x=y']) assert.is(safeNext(bad, '/home'), '/home', bad);
  assert.is(safeNext('/tasks?x=1', '/home'), '/tasks?x=1');
});

test('session cookie: read on GETs; on writes only from the same origin', () => {
  const req = (method: string, headers: Record<string, string>) => ({ method, headers: { cookie: 'a=1; svc_session=tok', host: '127.0.0.1:8052', ...headers } }) as unknown as IncomingMessage;
  assert.is(readCookie('a=1; svc_session=tok', 'svc_session'), 'tok');
  assert.is(sessionCookieOf(req('GET', { 'sec-fetch-site': 'cross-site' })), 'tok');
  assert.is(sessionCookieOf(req('POST', { 'sec-fetch-site': 'same-origin' })), 'tok');
  assert.is(sessionCookieOf(req('POST', { 'sec-fetch-site': 'same-site' })), undefined, 'another port of the same host');
  assert.is(sessionCookieOf(req('POST', { origin: 'http://127.0.0.1:8052' })), 'tok');
  assert.is(sessionCookieOf(req('PUT', { origin: 'http://127.0.0.1:3000' })), undefined);
  assert.is(sessionCookieOf(req('POST', {})), 'tok', 'no browser headers: not a cross-site request');
});

test('sessions: a JWT stops working when it expires, when revoked, or with another key', async () => {
  const tmp = makeTempDir('svc-sessions-');
  try {
    const clock = manualClock(Date.now());
    const layout = sddLayout(tmp.dir);
    const reg = new SessionRegistry(layout, clock, 3600);
    await reg.load();
    const { token, session } = await reg.create('usr_1', 'browser');
    assert.is((await reg.verify(token)).sid, session.sid);
    clock.advance(3600_000);
    await reg.verify(token).then(() => assert.unreachable('expired'), (e: HttpError) => assert.is(e.status, 401));
    const two = await reg.create('usr_1', 'device');
    await reg.revoke(two.session.sid);
    await reg.verify(two.token).then(() => assert.unreachable('revoked'), (e: HttpError) => assert.is(e.status, 401));
    const tmp2 = makeTempDir('svc-sessions-');
    try {
      const other = new SessionRegistry(sddLayout(tmp2.dir), clock, 3600);
      await other.load();
      const foreign = await other.create('usr_1', 'browser');
      await reg.verify(foreign.token).then(() => assert.unreachable('foreign key'), (e: HttpError) => assert.is(e.status, 401));
    } finally {
      tmp2.cleanup();
    }
  } finally {
    tmp.cleanup();
  }
});

test('IdP metadata: signing certificates and the redirect SSO URL', () => {
  const xml = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"><md:IDPSSODescriptor><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
MIIBxx
yy==</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp/post"/><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp/redirect"/></md:IDPSSODescriptor></md:EntityDescriptor>`;
  assert.equal(idpFromMetadata(xml), { certs: ['MIIBxxyy=='], ssoUrl: 'https://idp/redirect' });
});

test.run();
