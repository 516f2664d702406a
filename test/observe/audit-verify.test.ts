import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createAuditLog } from '../../src/observe/audit-log.ts';
import { formatAuditBreak, verifyAudit } from '../../src/observe/audit-verify.ts';
import { makeTempDir } from '../helpers/repo.ts';

// Ten records on 2026-03-01 (lines 1..10, seq 1..10) and ten on 2026-03-02 (seq 11..20).
async function twoDays() {
  const tmp = makeTempDir('svc-audit-verify-');
  const layout = sddLayout(tmp.dir);
  const clock = manualClock(Date.parse('2026-03-01T12:00:00.000Z'));
  const log = createAuditLog({ layout, clock, log: silentLogger() });
  for (let i = 1; i <= 20; i++) {
    await log.append({ actor: 'op', action: 'task.create', resource_type: 'task', resource_id: `t${i}`, details: { title: `task ${i}` } });
    if (i === 10) clock.advance(24 * 3600_000);
  }
  await log.close();
  const day2 = join(layout.auditDir, '2026-03-02.jsonl');
  const lines = readFileSync(day2, 'utf8').split('\n').slice(0, -1);
  const rewrite = (next: string[]) => writeFileSync(day2, next.map((l) => l + '\n').join(''));
  return { tmp, layout, lines, rewrite };
}

const Verify = suite('audit verify');

Verify('an empty or absent audit folder verifies without creating a key', async () => {
  const tmp = makeTempDir('svc-audit-verify-');
  const layout = sddLayout(tmp.dir);
  const res = await verifyAudit(layout);
  assert.equal(res, { ok: true, records: 0, segments: 0, lastSeq: 0, hmacChecked: true, warnings: [] });
  assert.not.ok(existsSync(layout.auditKey));
  tmp.cleanup();
});

Verify('tampered details are named by file, line, seq and "hmac mismatch"', async () => {
  const { tmp, layout, lines, rewrite } = await twoDays();
  rewrite(lines.map((l, i) => (i === 3 ? l.replace('task 14', 'task 99') : l)));
  const res = await verifyAudit(layout);
  assert.is(res.ok, false);
  assert.is(res.records, 13);
  assert.equal({ ...res.firstBroken, detail: undefined }, { file: '2026-03-02.jsonl', line: 4, seq: 14, reason: 'hmac mismatch', detail: undefined });
  assert.match(formatAuditBreak(res.firstBroken!), '.sdd/audit/2026-03-02.jsonl line 4 (seq 14): hmac mismatch');
  tmp.cleanup();
});

Verify('a deleted line breaks the chain at the record after it', async () => {
  const { tmp, layout, lines, rewrite } = await twoDays();
  rewrite(lines.filter((_, i) => i !== 5));
  const res = await verifyAudit(layout);
  assert.is(res.ok, false);
  assert.equal([res.firstBroken?.file, res.firstBroken?.line, res.firstBroken?.seq, res.firstBroken?.reason], ['2026-03-02.jsonl', 6, 17, 'seq gap']);
  tmp.cleanup();
});

Verify('a whole deleted day file breaks the chain at the first record after it', async () => {
  const { tmp, layout } = await twoDays();
  writeFileSync(join(layout.auditDir, '2026-03-01.jsonl'), '');
  const res = await verifyAudit(layout);
  assert.equal([res.ok, res.firstBroken?.line, res.firstBroken?.seq, res.firstBroken?.reason], [false, 1, 11, 'seq gap']);
  tmp.cleanup();
});

Verify('a relinked record (prev edited, seq kept) is a "prev mismatch"', async () => {
  const { tmp, layout, lines, rewrite } = await twoDays();
  rewrite(lines.map((l, i) => (i === 2 ? l.replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${'1'.repeat(64)}"`) : l)));
  const res = await verifyAudit(layout);
  assert.equal([res.firstBroken?.line, res.firstBroken?.seq, res.firstBroken?.reason], [3, 13, 'prev mismatch']);
  tmp.cleanup();
});

Verify('a record overwritten with garbage mid-file is "invalid JSON" at that line, not a warning', async () => {
  const { tmp, layout, lines, rewrite } = await twoDays();
  rewrite(lines.map((l, i) => (i === 4 ? 'not json at all' : l)));
  const res = await verifyAudit(layout);
  assert.is(res.ok, false);
  assert.equal([res.firstBroken?.file, res.firstBroken?.line, res.firstBroken?.seq, res.firstBroken?.reason], ['2026-03-02.jsonl', 5, null, 'invalid JSON']);
  tmp.cleanup();
});

Verify('a torn last line of an older day file is a warning when the next day links over it', async () => {
  const { tmp, layout } = await twoDays();
  const day1 = join(layout.auditDir, '2026-03-01.jsonl');
  writeFileSync(day1, readFileSync(day1, 'utf8') + '{"seq":11,"ts":"2026-03-0');
  const res = await verifyAudit(layout);
  assert.is(res.ok, true);
  assert.is(res.records, 20);
  assert.equal(res.warnings.map((w) => [w.file, w.line]), [['2026-03-01.jsonl', 11]]);
  tmp.cleanup();
});

Verify('a valid JSON line that is not a record is "invalid record"', async () => {
  const { tmp, layout, lines, rewrite } = await twoDays();
  rewrite([...lines.slice(0, 2), '{"hello":"world"}', ...lines.slice(2)]);
  const res = await verifyAudit(layout);
  assert.equal([res.firstBroken?.line, res.firstBroken?.seq, res.firstBroken?.reason], [3, null, 'invalid record']);
  tmp.cleanup();
});

Verify.run();
