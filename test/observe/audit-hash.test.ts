// The fast canonical form and HMAC of audit records against the reference (the canonicalize package and
// createHmac, what every existing log was signed with), on generated records: the chain format is unchanged.
import { createHmac } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import canonicalizeCjs from 'canonicalize';
import { canonicalRecord, hmacSigner, plainJsonText, recordSigner } from '../../src/observe/audit-hash.ts';
import { auditHmac } from '../../src/observe/audit.ts';
import { record, rng, str, variants } from '../helpers/audit-records.ts';

const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string;
const reference = (rec: Record<string, unknown>) => { const { hmac: _h, ...rest } = rec; return canonicalize(rest); };

test('canonicalRecord writes exactly what the canonicalize package writes, for 8,000 generated records as parsed from their lines', () => {
  const r = rng(17);
  let fast = 0;
  for (let i = 0; i < 2_000; i++) {
    for (const line of variants(JSON.stringify(record(r)))) {
      const rec = JSON.parse(line) as Record<string, unknown>;
      const want = reference(rec);
      assert.is(canonicalRecord(rec, plainJsonText(line)), want, line);
      assert.is(canonicalRecord(rec), want, line);
      if (plainJsonText(line)) fast++;
    }
  }
  assert.ok(fast > 1_000, `the plain path ran ${fast} times`);
});

test('a number JSON.parse reads as Infinity is refused as the canonicalize package refuses it', () => {
  const line = '{"seq":1,"ts":"t","actor":"a","action":"x","resource_type":"task","resource_id":null,"details":{"n":1e999},"prev":"p","hmac":"h"}';
  const rec = JSON.parse(line) as Record<string, unknown>;
  assert.throws(() => reference(rec), /Infinity/);
  assert.throws(() => canonicalRecord(rec, plainJsonText(line)), /Infinity/);
});

test('plainJsonText: no escape and no lone surrogate', () => {
  assert.ok(plainJsonText('{"a":"é日本\u{1F600}"}'));
  assert.not.ok(plainJsonText('{"a":"\\n"}'));
  assert.not.ok(plainJsonText('{"a":"\ud800"}'));
});

test('hmacSigner equals createHmac for keys of every length and messages of every size', () => {
  const r = rng(5);
  for (const len of [0, 1, 31, 32, 63, 64, 65, 200]) {
    const key = Buffer.from(Array.from({ length: len }, () => r.int(256)));
    const sign = hmacSigner(key);
    for (const msg of ['', 'x', str(r), str(r).repeat(400), '\u{1F600}'.repeat(3000), 'a'.repeat(5000)]) {
      assert.is(sign(msg), createHmac('sha256', key).update(msg).digest('hex'), `key ${len} bytes, message ${msg.length} chars`);
    }
  }
});

test('recordSigner gives the HMAC auditHmac gives (the writer\'s), for generated records', () => {
  const r = rng(99);
  const key = Buffer.from('5f'.repeat(32), 'hex');
  const sign = recordSigner(key);
  for (let i = 0; i < 1_000; i++) {
    const line = JSON.stringify(record(r));
    const rec = JSON.parse(line) as Record<string, unknown> & { prev: string };
    const want = createHmac('sha256', key).update(rec.prev + reference(rec)).digest('hex');
    assert.is(sign(rec, plainJsonText(line)), want, line);
    if (typeof rec.seq === 'number') assert.is(auditHmac(key, rec as never), want, line);
  }
});

test.run();
