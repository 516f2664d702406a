// SAML sign-in against a samlify IdP: a good assertion signs in; unsigned, foreign-signed, wrong
// audience or recipient, expired, replayed, IdP-initiated and signature-wrapped responses are refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CookieJar } from '../helpers/oidc-idp.ts';
import { makeSamlIdp } from '../helpers/saml-idp.ts';
import { postAcs, samlSignIn, SP_ENTITY_ID, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';

const test = suite('sso: saml');
let w: SsoWorld;
test.before(async () => { w = await startSsoWorld(); });
test.after(async () => { await w.stop(); });

const users = () => {
  try {
    return (JSON.parse(readFileSync(join(w.repo.dir, '.sdd', 'secrets', 'sso-users.json'), 'utf8')) as { users: { subject: string; role: string }[] }).users;
  } catch { return []; }
};
const sessions = () => {
  try {
    return (JSON.parse(readFileSync(join(w.repo.dir, '.sdd', 'secrets', 'sso-sessions.json'), 'utf8')) as { sessions: unknown[] }).sessions.length;
  } catch { return 0; }
};

async function refused(why: RegExp, run: () => Promise<{ status: number; session?: string; detail?: string }>) {
  const before = sessions();
  const l = await run();
  assert.is(l.status, 400, `status ${l.status} ${l.detail ?? ''}`);
  assert.match(l.detail ?? '', why, l.detail);
  assert.is(l.session, undefined, 'no session cookie');
  assert.is(sessions(), before, 'no session stored');
}

const xmlOf = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
const b64Of = (xml: string) => Buffer.from(xml).toString('base64');
const ASSERTION = /<saml:Assertion\b[\s\S]*<\/saml:Assertion>/;

test('bob signs in with a signed assertion: session, operator from his group, metadata names the SP', async () => {
  const l = await samlSignIn(w, 'bob');
  assert.is(l.status, 303, l.detail);
  assert.is(l.location, '/auth/device');
  const me = await (await fetch(`${w.url}/auth/me`, { headers: { authorization: `Bearer ${l.session}` } })).json();
  assert.is(me.provider, 'saml');
  assert.is(me.subject, 'bob');
  assert.is(me.issuer, w.saml.entityId);
  assert.is(me.email, 'bob@example.test');
  assert.is(me.role, 'operator');
  const md = await fetch(`${w.url}/auth/saml/metadata`);
  assert.is(md.status, 200);
  assert.match(md.headers.get('content-type') ?? '', /xml/);
  const text = await md.text();
  assert.match(text, `entityID="${SP_ENTITY_ID}"`);
  assert.match(text, w.acsUrl);
});

test('an unsigned assertion → 400, no session', async () => {
  await refused(/signature/i, () => samlSignIn(w, 'bob', { unsigned: true }));
});

test('an assertion signed by another IdP key → 400, no session', async () => {
  const other = makeSamlIdp(SP_ENTITY_ID, w.acsUrl);
  await refused(/signature/i, async () => {
    const start = await fetch(`${w.url}/auth/login?provider=saml`, { redirect: 'manual' });
    const location = start.headers.get('location')!;
    const response = await other.respond({ inResponseTo: w.saml.requestIdOf(location), nameId: 'bob', email: 'b@x', name: 'b', groups: [] });
    return postAcs(w, new CookieJar(), response, '');
  });
});

test('a wrong audience → 400, no session', async () => {
  await refused(/audience/i, () => samlSignIn(w, 'bob', { claims: (c) => { c.audience = 'http://someone-else.test/sp'; } }));
});

test('a wrong recipient → 400, no session', async () => {
  await refused(/recipient/i, () => samlSignIn(w, 'bob', { claims: (c) => { c.recipient = 'http://127.0.0.1:1/acs'; } }));
});

test('an expired assertion → 400, no session', async () => {
  // node-saml reports it on the bearer confirmation's NotOnOrAfter before the conditions'.
  await refused(/expired|no valid subject confirmation/i, () => samlSignIn(w, 'bob', { claims: (c) => { c.validMinutes = -10; } }));
});

test('a replayed response (InResponseTo already used) → 400, no session', async () => {
  const first = await samlSignIn(w, 'bob');
  assert.is(first.status, 303);
  await refused(/InResponseTo/i, () => postAcs(w, new CookieJar(), first.response, first.relayState));
});

test('an IdP-initiated response (no InResponseTo) or one for a request never made → 400', async () => {
  await refused(/InResponseTo/i, () => samlSignIn(w, 'bob', { claims: (c) => { c.inResponseTo = ''; } }));
  await refused(/InResponseTo/i, () => samlSignIn(w, 'bob', { claims: (c) => { c.inResponseTo = '_never-requested'; } }));
});

test('signature wrapping: an evil assertion beside, around or carrying the signed one → 400, nobody becomes alice', async () => {
  const evil = (signed: string) => signed.replace(/ ID="[^"]+"/, ' ID="_evil"').replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
    .replace(/>bob</, '>alice<').replace(/>eng</g, '>eng-admins<');
  const variants: Record<string, (xml: string) => string> = {
    'evil beside the signed one': (xml) => xml.replace(ASSERTION, (a) => evil(a) + a),
    'signed one hidden inside the evil one': (xml) => xml.replace(ASSERTION, (a) => evil(a).replace('</saml:Assertion>', `<saml:Advice>${a}</saml:Advice></saml:Assertion>`)),
    'signature moved onto the evil one': (xml) => xml.replace(ASSERTION, (a) => {
      const sig = /<ds:Signature[\s\S]*?<\/ds:Signature>/.exec(a)![0];
      return evil(a).replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${sig.replace('</ds:Signature>', `<ds:Object>${a}</ds:Object></ds:Signature>`)}`);
    }),
  };
  for (const [name, bend] of Object.entries(variants)) {
    const l = await samlSignIn(w, 'bob', { wrap: (b64) => b64Of(bend(xmlOf(b64))) });
    assert.is(l.status, 400, `${name}: ${l.status} ${l.detail ?? ''}`);
    assert.match(l.detail ?? "", /signature/i, name);
    assert.is(l.session, undefined, name);
  }
  assert.not.ok(users().some((u) => u.subject === 'alice' && u.role === 'admin'), 'no SAML alice exists');
});

test('no SAMLResponse → 400 "Missing SAMLResponse"; garbage → 400, never 500', async () => {
  const post = (body: string) => fetch(w.acsUrl, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const none = await post('RelayState=x');
  assert.is(none.status, 400);
  assert.is((await none.json()).detail, 'Missing SAMLResponse');
  for (const junk of ['SAMLResponse=', 'SAMLResponse=%%%', `SAMLResponse=${encodeURIComponent(b64Of('<not-saml/>'))}`, `SAMLResponse=${encodeURIComponent(b64Of('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'))}`]) {
    assert.is((await post(junk)).status, 400, junk);
  }
});

test.run();
