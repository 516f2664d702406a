// Verification with segments walked on worker threads names the same first broken link, the same
// warnings and the same counts as the walk on one thread, for every way a log can be damaged.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { nextRecord, type AuditTail } from '../../src/observe/audit.ts';
import { summariseInThreads, threadsFor } from '../../src/observe/audit-summarise.ts';
import { finishWalk, summariseSegment, verifyAudit, walkSegmentFiles, type SegmentSummary } from '../../src/observe/audit-verify.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeTempDir } from '../helpers/repo.ts';

const KEY = Buffer.from('5f'.repeat(32), 'hex');
const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'];
const PER_DAY = 12;

// Six day segments of twelve chained records, written as the server writes them.
function chain() {
  const tmp = makeTempDir('svc-audit-threads-');
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.auditDir, { recursive: true });
  mkdirSync(join(layout.sdd, 'secrets'), { recursive: true, mode: 0o700 });
  writeFileSync(layout.auditKey, `${KEY.toString('hex')}\n`, { mode: 0o600 });
  let tail: AuditTail = { seq: 0, hmac: '0'.repeat(64) };
  for (const day of DAYS) {
    const lines: string[] = [];
    for (let i = 0; i < PER_DAY; i++) {
      const rec = nextRecord(KEY, tail, { actor: 'op', action: 'task.update', resource_type: 'task', resource_id: `t${tail.seq}`, details: { title: `tâche ${tail.seq} \u{1F600}`, n: tail.seq } }, `${day}T00:00:${String(i).padStart(2, '0')}.000Z`);
      tail = rec;
      lines.push(JSON.stringify(rec));
    }
    writeFileSync(join(layout.auditDir, `${day}.jsonl`), `${lines.join('\n')}\n`);
  }
  const path = (d: number) => join(layout.auditDir, `${DAYS[d]}.jsonl`);
  const lines = (d: number) => readFileSync(path(d), 'utf8').split('\n').slice(0, -1);
  const put = (d: number, ls: string[], end = '\n') => writeFileSync(path(d), ls.length ? ls.join('\n') + end : '');
  return { tmp, layout, path, lines, put };
}

type Chain = ReturnType<typeof chain>;
const Threads = suite('audit verify on worker threads');

// Each damage, then: threads and one thread agree, and the verdict is the one the damage calls for.
const cases: [string, (c: Chain) => void, (r: Awaited<ReturnType<typeof verifyAudit>>) => void][] = [
  ['an intact log', () => undefined, (r) => assert.equal([r.ok, r.records, r.lastSeq], [true, 72, 72])],
  ['forged details in two segments: the older one is named', (c) => {
    c.put(2, c.lines(2).map((l, i) => (i === 4 ? l.replace('tâche', 'tache') : l)));
    c.put(4, c.lines(4).map((l, i) => (i === 1 ? l.replace('"n":49', '"n":50') : l)));
  }, (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.reason, r.records], ['2026-03-03.jsonl', 5, 'hmac mismatch', 28])],
  ['the first line of a segment deleted: a seq gap at the boundary', (c) => c.put(3, c.lines(3).slice(1)),
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.seq, r.firstBroken?.reason], ['2026-03-04.jsonl', 1, 38, 'seq gap'])],
  ['the first record of a segment relinked: a prev mismatch at the boundary', (c) => c.put(1, c.lines(1).map((l, i) => (i === 0 ? l.replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${'1'.repeat(64)}"`) : l))),
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.seq, r.firstBroken?.reason], ['2026-03-02.jsonl', 13, 'prev mismatch'])],
  ['a segment emptied', (c) => c.put(2, []), (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.seq, r.firstBroken?.reason], ['2026-03-04.jsonl', 37, 'seq gap'])],
  ['two segments swapped', (c) => { const a = c.lines(1); c.put(1, c.lines(2)); c.put(2, a); },
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.seq, r.firstBroken?.reason], ['2026-03-02.jsonl', 25, 'seq gap'])],
  ['a torn last line of a segment the next one links over: a warning', (c) => c.put(1, [...c.lines(1), '{"seq":25,"ts":"2026-03-0']),
    (r) => assert.equal([r.ok, r.records, r.warnings.map((w) => [w.file, w.line])], [true, 72, [['2026-03-02.jsonl', 13]]])],
  ['a torn line linked over, then a record missing two segments on: the warning and the gap', (c) => {
    c.put(1, [...c.lines(1), '{"seq":25,"ts":"2026-03-0']);
    c.put(4, c.lines(4).slice(1));
  }, (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.reason, r.warnings.map((w) => [w.file, w.line])], ['2026-03-05.jsonl', 1, 'seq gap', [['2026-03-02.jsonl', 13]]])],
  ['a torn last line the next segment does not link over', (c) => { c.put(1, [...c.lines(1), '{"seq":25,"ts"']); c.put(2, c.lines(2).slice(1)); },
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.reason], ['2026-03-02.jsonl', 13, 'invalid JSON'])],
  ['garbage mid-segment', (c) => c.put(4, c.lines(4).map((l, i) => (i === 6 ? 'not json' : l))),
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.reason], ['2026-03-05.jsonl', 7, 'invalid JSON'])],
  ['a JSON line that is not a record', (c) => c.put(5, [...c.lines(5).slice(0, 3), '{"hello":"world"}', ...c.lines(5).slice(3)]),
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.reason], ['2026-03-06.jsonl', 4, 'invalid record'])],
  ['a segment without its final newline', (c) => c.put(0, c.lines(0), ''), (r) => assert.equal([r.ok, r.records], [true, 72])],
  ['a copy of a segment appended as a new day', (c) => writeFileSync(join(c.layout.auditDir, '2026-03-07.jsonl'), readFileSync(c.path(2))),
    (r) => assert.equal([r.firstBroken?.file, r.firstBroken?.seq, r.firstBroken?.reason, r.records], ['2026-03-07.jsonl', 25, 'seq gap', 72])],
];

// Each segment walked on its own, as a worker thread walks it (summariseSegment is what the thread runs).
async function withSummaries(c: Chain, key: Uint8Array | null) {
  const names = readdirSync(c.layout.auditDir).filter((n) => n.endsWith('.jsonl')).sort();
  const known = new Map<string, SegmentSummary>();
  for (const n of names) {
    const s = summariseSegment(key, readFileSync(join(c.layout.auditDir, n), 'utf8'));
    if (s) known.set(n, s);
  }
  const { w } = await walkSegmentFiles(c.layout.auditDir, names, key, { known, threads: 0 });
  return finishWalk(w, names.length, key !== null);
}

for (const [name, damage, expect] of cases) {
  Threads(`${name}: segments walked on their own give the one-thread result`, async () => {
    const c = chain();
    try {
      damage(c);
      const one = await verifyAudit(c.layout, { threads: 0 });
      expect(one);
      assert.equal(await withSummaries(c, KEY), one);
      // The same with links only (a clone without the key), and with a wrong key.
      assert.equal(await withSummaries(c, null), await verifyAudit(c.layout, { key: null, threads: 0 }));
      const wrong = Buffer.alloc(32, 1);
      assert.equal(await withSummaries(c, wrong), await verifyAudit(c.layout, { key: wrong, threads: 0 }));
    } finally {
      c.tmp.cleanup();
    }
  });
}

// Worker threads start slowly from source (tsx compiles in each), so a few damages run on real threads.
for (const i of [1, 2, 6]) {
  const [name, damage, expect] = cases[i]!;
  Threads(`${name}: the same on worker threads`, async () => {
    const c = chain();
    try {
      damage(c);
      const many = await verifyAudit(c.layout, { threads: 2 });
      expect(many);
      assert.equal(many, await verifyAudit(c.layout, { threads: 0 }));
    } finally {
      c.tmp.cleanup();
    }
  });
}

Threads('the threads do the walking: a summary per clean segment, none for a damaged one', async () => {
  const c = chain();
  try {
    c.put(3, c.lines(3).map((l, i) => (i === 2 ? l.replace('tâche', 'tache') : l)));
    const names = DAYS.map((d) => `${d}.jsonl`);
    const got = await summariseInThreads(c.layout.auditDir, names, KEY, 2);
    assert.equal(got.map((s) => (s ? s.records : s)), [12, 12, 12, null, 12, 12]);
    assert.equal(got[1], summariseSegment(KEY, readFileSync(c.path(1), 'utf8')));
    assert.equal([got[1]?.firstSeq, got[1]?.lastSeq], [13, 24]);
    const walk = await walkSegmentFiles(c.layout.auditDir, names, KEY, { threads: 2 });
    assert.equal([...walk.clean.keys()], names.slice(0, 3));
  } finally {
    c.tmp.cleanup();
  }
});

Threads('threads: one per 4 MB, at most one per core and 8, none for a small log or a busy machine', () => {
  const MB = 1 << 20;
  assert.is(threadsFor(7 * MB, 8, 0.5), 0, 'under 8 MB: one thread, no workers');
  assert.is(threadsFor(8 * MB, 8, 0.5), 2);
  assert.is(threadsFor(178 * MB, 2, 0.5), 2, 'a year on 2 cores');
  assert.is(threadsFor(178 * MB, 64, 3), 8);
  assert.is(threadsFor(178 * MB, 1, 0), 0, 'one core');
  assert.is(threadsFor(178 * MB, 2, 2), 0, 'load at the cores: busy');
  assert.is(threadsFor(178 * MB, 8, 7.9), 8);
});

Threads.run();
