import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { appendFileSync, chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { sddLayout, type SddLayout } from '../../src/store/layout.ts';
import { GENESIS_PREV, type AuditRecord } from '../../src/observe/audit.ts';
import { createAuditLog } from '../../src/observe/audit-log.ts';
import { AuditKeyError } from '../../src/observe/audit-key.ts';
import { verifyAudit } from '../../src/observe/audit-verify.ts';
import { makeTempDir } from '../helpers/repo.ts';

const entry = (i: number) => ({ actor: 'tok-1', action: 'task.claim', resource_type: 'task', resource_id: `t${i}`, details: { i } });
const readLines = (layout: SddLayout, name: string) =>
  readFileSync(join(layout.auditDir, name), 'utf8').split('\n').filter((l) => l !== '');

function setup(start = '2026-03-01T12:00:00.000Z') {
  const tmp = makeTempDir('svc-audit-');
  const layout = sddLayout(tmp.dir);
  const clock = manualClock(Date.parse(start));
  const touched: string[] = [];
  const open = () => createAuditLog({ layout, clock, log: silentLogger(), onAppend: (p) => touched.push(p) });
  return { tmp, layout, clock, touched, open };
}

const Audit = suite('audit log');

Audit('records chain across two UTC days, one segment per day, and verify passes', async () => {
  const { tmp, layout, clock, open } = setup('2026-03-01T23:59:00.000Z');
  const log = open();
  const recs: AuditRecord[] = [];
  for (let i = 1; i <= 60; i++) { recs.push(await log.append(entry(i))); clock.advance(2000); }
  await log.close();
  assert.equal(readdirSync(layout.auditDir), ['2026-03-01.jsonl', '2026-03-02.jsonl']);
  assert.equal(recs.map((r) => r.seq), Array.from({ length: 60 }, (_, i) => i + 1));
  assert.is(recs[0]?.prev, GENESIS_PREV);
  const day1 = readLines(layout, '2026-03-01.jsonl');
  const day2 = readLines(layout, '2026-03-02.jsonl');
  assert.is(day1.length + day2.length, 60);
  // Each record's date matches its segment, and day 2 links to the last record of day 1.
  for (const l of day1) assert.ok((JSON.parse(l) as AuditRecord).ts.startsWith('2026-03-01'));
  const first2 = JSON.parse(day2[0] ?? '') as AuditRecord;
  assert.is(first2.prev, (JSON.parse(day1.at(-1) ?? '') as AuditRecord).hmac);
  const res = await verifyAudit(layout);
  assert.equal({ ok: res.ok, records: res.records, segments: res.segments, lastSeq: res.lastSeq }, { ok: true, records: 60, segments: 2, lastSeq: 60 });
  tmp.cleanup();
});

Audit('hmac is HMAC-SHA256(key, prev + RFC 8785 JSON of the record without hmac)', async () => {
  const { tmp, layout, open } = setup();
  const log = open();
  const rec = await log.append({ actor: 'a', action: 'token.issue', resource_type: 'token', resource_id: null, details: { z: 1, b: 'é' } });
  await log.close();
  const key = Buffer.from(readFileSync(layout.auditKey, 'utf8').trim(), 'hex');
  const canonical = `{"action":"token.issue","actor":"a","details":{"b":"é","z":1},"prev":"${GENESIS_PREV}",`
    + `"resource_id":null,"resource_type":"token","seq":1,"ts":"2026-03-01T12:00:00.000Z"}`;
  assert.is(rec.hmac, createHmac('sha256', key).update(GENESIS_PREV + canonical).digest('hex'));
  tmp.cleanup();
});

Audit('key file is 64 hex chars, mode 0600, in a 0700 secrets folder; a group-readable key is refused', async () => {
  const { tmp, layout, open } = setup();
  const log = open();
  await log.append(entry(1));
  await log.close();
  assert.is(statSync(layout.auditKey).mode & 0o777, 0o600);
  assert.is(statSync(layout.secrets).mode & 0o777, 0o700);
  assert.match(readFileSync(layout.auditKey, 'utf8').trim(), /^[0-9a-f]{64}$/);
  chmodSync(layout.auditKey, 0o640);
  const again = open();
  try {
    await again.append(entry(2));
    assert.unreachable('append with a group-readable key');
  } catch (e) {
    assert.instance(e, AuditKeyError);
    assert.match((e as Error).message, /640/);
  }
  try {
    await verifyAudit(layout);
    assert.unreachable('verify with a group-readable key');
  } catch (e) {
    assert.instance(e, AuditKeyError);
  }
  tmp.cleanup();
});

Audit('200 concurrent appends form one valid chain with seq 1..200; onAppend names each segment', async () => {
  const { tmp, layout, touched, open } = setup();
  const log = open();
  const recs = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(entry(i))));
  await log.close();
  assert.equal(recs.map((r) => r.seq), Array.from({ length: 200 }, (_, i) => i + 1));
  // Call order is chain order.
  assert.equal(recs.map((r) => r.details.i), Array.from({ length: 200 }, (_, i) => i));
  assert.is(touched.length, 200);
  assert.ok(touched.every((p) => p === join(layout.auditDir, '2026-03-01.jsonl')));
  const res = await verifyAudit(layout);
  assert.is(res.ok, true);
  assert.is(res.records, 200);
  tmp.cleanup();
});

Audit('a restarted log continues seq and chain from the newest segment', async () => {
  const { tmp, layout, clock, open } = setup();
  const first = open();
  for (let i = 1; i <= 3; i++) await first.append(entry(i));
  await first.close();
  clock.advance(24 * 3600_000);
  const second = open();
  const last3 = JSON.parse(readLines(layout, '2026-03-01.jsonl').at(-1) ?? '') as AuditRecord;
  assert.equal(await second.open(), { seq: 3, hmac: last3.hmac });
  const r4 = await second.append(entry(4));
  await second.close();
  const third = open();
  const r5 = await third.append(entry(5));
  await third.close();
  const last = JSON.parse(readLines(layout, '2026-03-01.jsonl').at(-1) ?? '') as AuditRecord;
  assert.is(r4.seq, 4);
  assert.is(r4.prev, last.hmac);
  assert.is(r5.seq, 5);
  assert.is(r5.prev, r4.hmac);
  assert.is((await verifyAudit(layout)).ok, true);
  tmp.cleanup();
});

Audit('a torn final line is tolerated with a warning, sealed, and the next append continues the chain', async () => {
  const { tmp, layout, open } = setup();
  const log = open();
  for (let i = 1; i <= 5; i++) await log.append(entry(i));
  await log.close();
  const seg = join(layout.auditDir, '2026-03-01.jsonl');
  // A crash half-way through writing record 6.
  appendFileSync(seg, '{"seq":6,"ts":"2026-03-01T12:00:00.000Z","actor":"tok');
  const crashed = await verifyAudit(layout);
  assert.is(crashed.ok, true);
  assert.is(crashed.records, 5);
  assert.equal(crashed.warnings.map((w) => [w.file, w.line]), [['2026-03-01.jsonl', 6]]);
  const after = open();
  const r6 = await after.append(entry(6));
  await after.close();
  assert.is(r6.seq, 6);
  const lines = readFileSync(seg, 'utf8').split('\n');
  assert.ok(lines[5]?.startsWith('{"seq":6,"ts"') && !lines[5].endsWith('}'), 'torn line kept, sealed by a newline');
  assert.is((JSON.parse(lines[6] ?? '') as AuditRecord).hmac, r6.hmac);
  const res = await verifyAudit(layout);
  assert.is(res.ok, true);
  assert.is(res.records, 6);
  assert.equal(res.warnings.map((w) => w.line), [6]);
  tmp.cleanup();
});

Audit('records never go to an older segment when the clock steps back across midnight', async () => {
  const { tmp, layout, clock, open } = setup('2026-03-02T00:00:05.000Z');
  const log = open();
  await log.append(entry(1));
  clock.advance(-10_000);
  const r2 = await log.append(entry(2));
  await log.close();
  assert.is(r2.ts, '2026-03-01T23:59:55.000Z');
  assert.equal(readdirSync(layout.auditDir), ['2026-03-02.jsonl']);
  assert.is((await verifyAudit(layout)).ok, true);
  tmp.cleanup();
});

Audit('append after close is refused', async () => {
  const { tmp, open } = setup();
  const log = open();
  await log.append(entry(1));
  await log.close();
  try {
    await log.append(entry(2));
    assert.unreachable('append after close');
  } catch (e) {
    assert.match((e as Error).message, /closed/);
  }
  tmp.cleanup();
});

Audit.run();
