// Signature vectors: the chat platform's published example, and per tracker scheme one good and many bad deliveries.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { trackerRegistry } from '../../src/webhooks/index.ts';
import { verifyDelivery } from '../../src/webhooks/trackers/registry.ts';
import { checkChatSignature, checkTimestampedSignature, digestMatches, hmacHex, safeEqual, verifySha256Prefixed } from '../../src/webhooks/signature.ts';

const T = suite('webhooks: signatures');
const registry = trackerRegistry();
const at = (s: number) => s * 1000;

// The platform's documented example request.
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const SLACK_BODY = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const SLACK_SIG = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

T('chat: the published example verifies; uppercase hex too', () => {
  assert.is(checkChatSignature(SLACK_SECRET, Buffer.from(SLACK_BODY), '1531420618', SLACK_SIG, at(1531420618)), null);
  assert.is(checkChatSignature(SLACK_SECRET, Buffer.from(SLACK_BODY), '1531420618', SLACK_SIG.toUpperCase().replace('V0=', 'v0='), at(1531420700)), null);
  const body = 'command=%2Fbernstein&text=fix+the+build&user_id=U1&channel_id=C1';
  assert.is(checkChatSignature('test_secret_key', Buffer.from(body), '1700000000', 'v0=a9c6f111cb64cece47eda2565dc5c8edceb10b594741fd20048a2c0bfe6febcd', at(1700000000)), null);
});

T('chat: stale, future-dated, malformed timestamps and bad signatures are refused (never thrown)', () => {
  const raw = Buffer.from(SLACK_BODY);
  assert.is(checkChatSignature(SLACK_SECRET, raw, '1531420618', SLACK_SIG, at(1531420618 + 301)), 'stale or future-dated timestamp');
  assert.is(checkChatSignature(SLACK_SECRET, raw, '1531420618', SLACK_SIG, at(1531420618 - 301)), 'stale or future-dated timestamp');
  assert.is(checkChatSignature(SLACK_SECRET, raw, '1531420618', SLACK_SIG, at(1531420618 + 300)), null, '300 s is still fresh');
  for (const ts of [undefined, '', 'abc', '1531420618.5', '1e9']) assert.is(checkChatSignature(SLACK_SECRET, raw, ts, SLACK_SIG, at(1531420618)), 'missing or malformed timestamp');
  const bad = [undefined, '', 'v0=', SLACK_SIG.slice(0, -1), `${SLACK_SIG}0`, SLACK_SIG.replace('v0=', 'v1='), SLACK_SIG.replace('a2114', 'b2114'), 'v0=zz' + SLACK_SIG.slice(5), '\u00e9'.repeat(67)];
  for (const sig of bad) assert.is(checkChatSignature(SLACK_SECRET, raw, '1531420618', sig, at(1531420618)), 'signature mismatch', String(sig));
  assert.is(checkChatSignature('other', raw, '1531420618', SLACK_SIG, at(1531420618)), 'signature mismatch');
  assert.is(checkChatSignature(SLACK_SECRET, Buffer.from(SLACK_BODY.replace('foobar', 'foobaz')), '1531420618', SLACK_SIG, at(1531420618)), 'signature mismatch');
});

// One known-good delivery per scheme, and the ways a delivery goes wrong.
const BODY = Buffer.from('{"action":"opened","issue":{"title":"Zoë\'s café","number":7}}');
const SECRET = 'shh';
const good: Record<string, (b: Buffer) => Record<string, string>> = {
  tracker_a: (b) => ({ 'x-hub-signature': `sha256=${hmacHex(SECRET, b)}` }),
  tracker_b: (b) => ({ 'x-hub-signature-256': `sha256=${hmacHex(SECRET, b)}` }),
  tracker_c: () => ({ 'x-gitlab-token': SECRET }),
  tracker_d: (b) => ({ 'linear-signature': hmacHex(SECRET, b) }),
  tracker_e: (b) => ({ 'x-plane-signature': hmacHex(SECRET, b) }),
};
const check = (name: string, secret: string, raw: Buffer, h: Record<string, string>) => verifyDelivery(registry.find(name)!, secret, raw, (n) => h[n]);

T('trackers: the known-good delivery of every scheme verifies, under the literal and the native header', async () => {
  assert.ok(await verifySha256Prefixed('shh', Buffer.from('{"action":"opened"}'), 'sha256=ef92923be02dc70dbf5f54a4b73d4e1caa838b56f19143a57ddf555d972f9bfd'));
  for (const [name, sign] of Object.entries(good)) assert.ok(await check(name, SECRET, BODY, sign(BODY)), name);
  assert.ok(await check('tracker_b', SECRET, BODY, { 'x-hub-signature-256': `sha256=${hmacHex(SECRET, BODY)}`.toUpperCase().replace('SHA256=', 'sha256=') }));
  assert.ok(await check('tracker_c', SECRET, BODY, { 'x-tracker_c-token': SECRET }));
  assert.ok(await check('tracker_d', SECRET, BODY, { 'tracker_d-signature': hmacHex(SECRET, BODY) }));
  assert.ok(await check('tracker_e', SECRET, BODY, { 'x-tracker_e-signature': hmacHex(SECRET, BODY) }));
  // Bytes that are not UTF-8 are verified byte-exact too.
  const latin1 = Buffer.from([0x7b, 0xe9, 0x7d]);
  assert.ok(await check('tracker_b', SECRET, latin1, good.tracker_b!(latin1)));
});

T('trackers: wrong secret, truncated, wrong length, altered byte, unicode-escaped body, missing header: refused without throwing', async () => {
  const escaped = Buffer.from(BODY.toString('utf8').replace('ë', '\\u00eb').replace('é', '\\u00e9'));
  const altered = Buffer.from(BODY);
  altered[10] = altered[10]! ^ 0x01;
  for (const [name, sign] of Object.entries(good)) {
    const [[hname, value]] = Object.entries(sign(BODY)) as [[string, string]];
    const variants: [string, Buffer, Record<string, string>][] = [
      ['wrong secret', BODY, sign(BODY)],
      ['truncated', BODY, { [hname]: value.slice(0, -2) }],
      ['wrong length', BODY, { [hname]: `${value}00` }],
      ['empty', BODY, { [hname]: '' }],
      ['missing', BODY, {}],
      ['non-hex', BODY, { [hname]: value.replace(/[0-9a-f]$/, 'z') }],
      ['altered byte', altered, sign(BODY)],
      ['unicode-escaped body', escaped, sign(BODY)],
    ];
    for (const [what, raw, h] of variants) {
      // tracker_c compares a token, not the body: only its header variants and the wrong secret apply.
      if (name === 'tracker_c' && (what === 'altered byte' || what === 'unicode-escaped body' || what === 'non-hex')) continue;
      const secret = what === 'wrong secret' ? 'not-the-secret' : SECRET;
      assert.is(await check(name, secret, raw, h), false, `${name}: ${what}`);
    }
    assert.is(await check(name, '', BODY, sign(BODY)), false, `${name}: an empty secret never verifies`);
  }
  assert.is(await check('tracker_b', SECRET, Buffer.alloc(0), { 'x-hub-signature-256': `sha256=${hmacHex(SECRET, '')}` }), true, 'an empty body is signed like any other');
  assert.is(await check('tracker_b', SECRET, BODY, { 'x-hub-signature-256': `sha1=${hmacHex(SECRET, BODY).slice(0, 40)}` }), false, 'sha1= prefix');
});

T('/webhook: sha256= over "<ts>." + body, timestamp all digits and within 300 s', () => {
  const raw = Buffer.from('{"title":"t","description":"d"}');
  const sig = 'sha256=a40d68b25070ac6f37c78db99c1026e3e924415ac050f422b749268861a6df47';
  assert.is(checkTimestampedSignature('s3cret', raw, '1700000000', sig, at(1700000000)), null);
  assert.is(checkTimestampedSignature('s3cret', raw, '1700000000', sig, at(1700000400)), 'Stale or future-dated X-Timestamp header');
  assert.is(checkTimestampedSignature('s3cret', raw, '1700000000', sig, at(1699999600)), 'Stale or future-dated X-Timestamp header');
  assert.is(checkTimestampedSignature('s3cret', raw, '+1700000000', sig, at(1700000000)), 'Missing or malformed X-Timestamp header');
  assert.is(checkTimestampedSignature('s3cret', raw, undefined, sig, at(1700000000)), 'Missing or malformed X-Timestamp header');
  assert.is(checkTimestampedSignature('s3cret', raw, '1700000000', undefined, at(1700000000)), 'Missing X-Signature-256 header');
  assert.is(checkTimestampedSignature('s3cret', raw, '1700000001', sig, at(1700000000)), 'Invalid webhook signature', 'the timestamp is bound into the HMAC');
  // /hooks: sha256= over the body alone.
  assert.ok(digestMatches('sha256=7a847ec0dcb72f4cc83feb1e4d5a3dbae07fd1094ded42062ce5c87a6df2d393', hmacHex('s3cret', '{"hook_event_name":"Stop"}'), 'sha256='));
});

T('safeEqual never throws on different lengths or types', () => {
  assert.is(safeEqual('a', 'ab'), false);
  assert.is(safeEqual('', ''), true);
  assert.is(safeEqual(Buffer.from('x'), 'x'), true);
  assert.is(safeEqual('\u{1F600}', 'ab'), false);
});

T.run();
