// The snapshot a stop writes and the next start trusts per file: its format (torn or foreign files refused),
// the pure verdict, and the verdict the start's comparison gives on this thread and on the scan thread.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createCommitter } from '../../src/store/committer.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { blobId } from '../../src/store/git-objects.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { stableStringify } from '../../src/store/records/cas.ts';
import { readSnapshotIndex, readSnapshotRecords, recordText, writeSnapshot } from '../../src/store/snapshot.ts';
import { snapshotJudge, type SnapshotVerdict } from '../../src/store/snapshot-judge.ts';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';

const S = suite('store snapshot');
let tmp: ReturnType<typeof makeTempDir>;
S.before.each(() => { tmp = makeTempDir('svc-snapshot-'); });
S.after.each(() => tmp.cleanup());

const rec = (id: string, extra: Record<string, unknown> = {}) => ({ id, version: 1, title: `task ${id}`, metadata: {}, ...extra });

S('a snapshot gives back every record, and each one\'s blob id is that of its file\'s text', async () => {
  const file = join(tmp.dir, 'board.snapshot');
  // More than one chunk (1,000 records each), keys in and out of order.
  const items = Array.from({ length: 2500 }, (_, i) => [`tasks/${i % 7}/r${i}.json`, i % 2 ? rec(`r${i}`) : { title: 'x', id: `r${i}`, metadata: { z: 1, a: [{ b: 2, a: 1 }] } }] as const);
  assert.is(await writeSnapshot(file, 'tasks/', items), 2500);
  const records = readSnapshotRecords<{ id: string }>(file);
  assert.ok(!('reason' in records), JSON.stringify(records));
  if ('reason' in records) return;
  assert.equal(records.values, items.map(([, v]) => JSON.parse(stableStringify(v))));
  const index = readSnapshotIndex(file);
  if ('reason' in index) throw new Error(index.reason);
  assert.is(index.stamp, records.stamp);
  assert.is(index.index.size, 2500);
  for (const [rel, v] of items) assert.is(index.index.get(rel), blobId(Buffer.from(stableStringify(v))));
});

// Records whose keys are in their file's order go as rows of values under the chunk's key list (snapshot-rows.ts):
// the same records come back, keys in their file's order, whatever mix of shapes a chunk holds.
S('records go as rows when they have the chunk\'s keys in order, and come back as their files\' records', async () => {
  const file = join(tmp.dir, 'board.snapshot');
  const shapes = (i: number): Record<string, unknown> => [
    { a: i, id: `r${i}`, metadata: { k: [1, { x: 1, y: 'é"\n' }] }, title: `t${i}`, version: 1 },
    { a: i, id: `r${i}`, metadata: {}, title: null, version: 2 },
    { a: i, id: `r${i}`, metadata: {}, title: undefined, version: 3 }, // undefined: not in the file, so not a row
    { a: i, extra: true, id: `r${i}`, metadata: {}, title: 'x', version: 4 },
    { a: i, id: `r${i}`, metadata: { z: 1, a: 2 }, title: 'x', version: 5 }, // nested keys out of order
    { id: `r${i}`, a: i },
  ][i % 6]!;
  const items = Array.from({ length: 2100 }, (_, i) => [`tasks/${i % 7}/r${i}.json`, shapes(i)] as const);
  await writeSnapshot(file, 'tasks/', items);
  const records = readSnapshotRecords<Record<string, unknown>>(file);
  if ('reason' in records) throw new Error(records.reason);
  assert.is(JSON.stringify(records.values), JSON.stringify(items.map(([, v]) => JSON.parse(stableStringify(v)))), 'same records, keys in the same order');
  // Records of one shape: their chunks take under half the bytes of their texts.
  const alike = items.filter((_, i) => i % 6 < 2);
  await writeSnapshot(file, 'tasks/', alike);
  const trailer = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!) as { chunks: number[] };
  const rows = trailer.chunks.reduce((a, b) => a + b, 0), texts = alike.reduce((n, [, v]) => n + stableStringify(v).length, 0);
  assert.ok(rows < texts / 2, `rows: ${rows} bytes against ${texts} of texts`);
  // A snapshot of the format before rows (chunks of the files' texts) is still read.
  const old = [stableStringify({ id: 'a', v: 1 }), stableStringify({ b: [], id: 'b' })];
  const chunk = `[${old.join(',')}]`;
  const index = JSON.stringify(['tasks/a/a.json', blobId(Buffer.from(old[0]!)), 'tasks/b/b.json', blobId(Buffer.from(old[1]!))]);
  writeFileSync(file, `${chunk}${index}\n${JSON.stringify({ format: 'svc-snapshot/1', prefix: 'tasks/', count: 2, chunks: [Buffer.byteLength(chunk)], index: Buffer.byteLength(index) })}\n`);
  const before = readSnapshotRecords(file);
  if ('reason' in before) throw new Error(before.reason);
  assert.equal(before.values, [{ id: 'a', v: 1 }, { b: [], id: 'b' }]);
});

S('a record\'s text is its file\'s text whatever the order of its keys', () => {
  for (const v of [rec('a'), { b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } }, { 10: 'x', 9: 'y', a: '' }, { a: [], b: {}, c: 'é\n"' }]) {
    assert.is(recordText(v), stableStringify(v));
  }
});

S('a torn, foreign or missing snapshot is refused with its reason, never read', async () => {
  const file = join(tmp.dir, 'board.snapshot');
  assert.equal(readSnapshotRecords(file), { reason: 'absent' });
  await writeSnapshot(file, 'tasks/', [['tasks/a/a.json', rec('a')], ['tasks/b/b.json', rec('b')]]);
  const whole = readFileSync(file);
  truncateSync(file, whole.length - 1);
  assert.match((readSnapshotRecords(file) as { reason: string }).reason, 'torn');
  truncateSync(file, Math.floor(whole.length / 2));
  assert.match((readSnapshotRecords(file) as { reason: string }).reason, 'torn');
  assert.match((readSnapshotIndex(file) as { reason: string }).reason, 'torn');
  writeFileSync(file, whole.toString().replace('svc-snapshot/2', 'svc-snapshot/9'));
  assert.match((readSnapshotRecords(file) as { reason: string }).reason, 'svc-snapshot/9');
  // A chunk that does not parse, at the right length: refused whole, nothing half-given.
  writeFileSync(file, Buffer.concat([Buffer.from('{'), whole.subarray(1)]));
  assert.ok('reason' in readSnapshotRecords(file));
  writeFileSync(file, '');
  assert.ok('reason' in readSnapshotRecords(file));
});

S('the verdict keeps the records whose files have their blob id, and names the rest and the files it lacks', () => {
  const judge = snapshotJudge({ stamp: 's', prefix: 'tasks/', index: new Map([['tasks/a.json', 'o1'], ['tasks/b.json', 'o2'], ['tasks/c.json', 'o3']]) });
  judge.see('tasks/a.json', 'o1');
  judge.see('tasks/b.json', 'changed');
  judge.see('tasks/d.json', 'o4');
  judge.see('eu_ai_act/a.json', 'o9');
  assert.equal(judge.verdict(), { stamp: 's', stale: ['tasks/b.json', 'tasks/c.json'], read: ['tasks/b.json', 'tasks/d.json'] });
});

// Overwrite the snapshot's index (its bytes, not its length): a start that reads it finds it unreadable.
function spoilIndex(file: string): void {
  const bytes = readFileSync(file);
  const text = bytes.toString('latin1');
  const trailer = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1)) as { chunks: number[]; index: number };
  bytes.fill(0x78, trailer.chunks.reduce((a, b) => a + b, 0), trailer.chunks.reduce((a, b) => a + b, 0) + trailer.index);
  writeFileSync(file, bytes);
}

// The start's comparison judges the snapshot from the blob ids it establishes: a file edited while the
// server was down (same size, mtime put back), one emptied, one deleted (restored from the ref: as the
// snapshot has it), one added; a dead writer's temp file in a task folder is removed. `by`: 'ref', the
// snapshot holds the ref's folders (the tree id of each), so the ref's listing judges and its index is never
// read (spoilt here to prove it); 'index', the snapshot's c3 is not the committed one, so its folder differs
// from the ref's and the index judges (c3 stale too).
async function judgedAtStart(repo: TempRepo, thread: boolean, by: 'ref' | 'index') {
  const layout = sddLayout(repo.dir);
  const ids = ['a1', 'b2', 'c3', 'e5'];
  const values = new Map(ids.map((id) => [id, rec(id)]));
  for (const id of ids) {
    mkdirSync(dirname(layout.task(id)), { recursive: true });
    writeFileSync(layout.task(id), stableStringify(values.get(id)));
  }
  const committer = () => createCommitter({ layout, git: createGit(repo.dir), log: silentLogger(), clock: manualClock(), intervalMs: 60_000, gcEveryCommits: 0 });
  const first = committer();
  await first.recover();
  // The clean stop vouches (by a stat) only for files older than it by 2 s: wait, so it does here.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await first.stop();
  if (by === 'index') values.set('c3', rec('c3', { title: 'not the committed one' }));
  await writeSnapshot(layout.boardSnapshot, 'tasks/', ids.map((id) => [`tasks/${id.slice(-2)}/${id}.json`, values.get(id)] as const));
  if (by === 'ref') spoilIndex(layout.boardSnapshot);
  const a1 = layout.task('a1');
  const old = statSync(a1);
  writeFileSync(a1, stableStringify(rec('a1', { title: 'task A1' })));
  utimesSync(a1, old.atime, old.mtime);
  writeFileSync(layout.task('b2'), '');
  rmSync(layout.task('e5'));
  mkdirSync(dirname(layout.task('d4')), { recursive: true });
  writeFileSync(layout.task('d4'), stableStringify(rec('d4')));
  const temp = join(dirname(layout.task('c3')), '.c3.json.99.abc.tmp');
  writeFileSync(temp, 'half');
  let verdict: SnapshotVerdict | null | undefined;
  await committer().recover({ thread, restore: true, snapshot: layout.boardSnapshot, onSnapshot: (v) => { verdict = v; } });
  assert.ok(verdict, 'judged');
  const c3 = by === 'index' ? ['tasks/c3/c3.json'] : [];
  assert.equal([...verdict!.stale].sort(), ['tasks/a1/a1.json', 'tasks/b2/b2.json', ...c3]);
  assert.equal([...verdict!.read].sort(), ['tasks/a1/a1.json', 'tasks/b2/b2.json', ...c3, 'tasks/d4/d4.json']);
  assert.not.ok(existsSync(temp), 'the dead writer\'s temp file is removed');
  assert.ok(existsSync(layout.task('e5')), 'restored');
  // Without a snapshot file: no verdict.
  let none: SnapshotVerdict | null | undefined;
  await committer().recover({ thread, snapshot: join(repo.dir, 'nothing'), onSnapshot: (v) => { none = v; } });
  assert.is(none, null);
}

for (const thread of [false, true]) {
  for (const by of ['ref', 'index'] as const) {
    S(`the start's comparison judges the snapshot by the files' blob ids (${thread ? 'on the scan thread' : 'on this thread'}; by the ${by === 'ref' ? 'ref\'s listing, the index unread' : 'snapshot\'s index'})`, async () => {
      const repo = makeRepo('svc-snapshot-scan-');
      try { await judgedAtStart(repo, thread, by); } finally { repo.cleanup(); }
    });
  }
}

S.run();
