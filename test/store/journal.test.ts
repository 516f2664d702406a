import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { errnoError } from '../../src/store/io.ts';
import { dropAuditIntents, journalPaths, replayJournal } from '../../src/store/journal.ts';
import { lastEntries, settledCount } from '../../src/store/journal-plan.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createRecordStore, type RecordStoreOptions } from '../../src/store/records.ts';
import { StorageUnavailable } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

/** Polls `ok` every 20 ms until it holds or `ms` pass (timers under load fire late; the bound is generous). */
async function until(ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

type Counter = { version: number; counter: number };
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/store');
const run = promisify(execFile);
const log = silentLogger();

const journal = suite('store journal');
let tmp: ReturnType<typeof makeTempDir>;
journal.before.each(() => {
  tmp = makeTempDir('svc-journal-');
});
journal.after.each(() => tmp.cleanup());

const open = (extra: Partial<RecordStoreOptions> = {}) => {
  const layout = sddLayout(tmp.dir);
  const store = createRecordStore({ layout, log, committer: { touch() {} }, ...extra });
  return { layout, store, paths: journalPaths(layout) };
};
const journalLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { p: string; t: string | null });
const journalFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('journal.') && n.endsWith('.jsonl')) : []);

journal('a write killed between its journal line and its file is restored by replay', async () => {
  const { layout, paths } = open();
  const child = join(tmp.dir, 'child.mts');
  writeFileSync(child, `
    import { silentLogger } from '${src}/../lib/log.ts';
    import { sddLayout } from '${src}/layout.ts';
    import { createRecordStore } from '${src}/records.ts';
    const layout = sddLayout(${JSON.stringify(tmp.dir)});
    let armed = false;
    const store = createRecordStore({ layout, log: silentLogger(), committer: { touch() {} },
      afterJournal: () => { if (armed) process.kill(process.pid, 'SIGKILL'); } });
    await store.create(layout.task('t01'), { version: 1, counter: 0 });
    armed = true;
    await store.update(layout.task('t01'), (t) => ({ ...t, counter: 7 }));
    process.stdout.write('not killed\\n');
  `);
  const out = await run(process.execPath, ['--import', 'tsx', child], { timeout: 30_000 }).catch((err: { signal?: string; stdout: string }) => err);
  assert.is((out as { signal?: string }).signal, 'SIGKILL', JSON.stringify(out).slice(0, 2000));
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 1, counter: 0 }, 'file not written yet');
  const last = journalLines(paths.current).at(-1)!;
  assert.equal(JSON.parse(last.t!), { version: 2, counter: 7 }, 'the journal line was on disk first');
  assert.is(await replayJournal(layout, log, async () => undefined), 1);
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 2, counter: 7 });
  assert.equal(journalFiles(paths.dir), [], 'journal dropped after replay');
});

journal('replay writes the last entry per path, deletes null entries, skips a torn tail, and is idempotent', async () => {
  const { layout, paths } = open();
  mkdirSync(paths.dir, { recursive: true });
  mkdirSync(join(layout.sdd, 'x'), { recursive: true });
  writeFileSync(join(layout.sdd, 'x/gone.json'), 'old\n');
  const line = (p: string, t: string | null) => '\n' + JSON.stringify({ p, t }) + '\n';
  writeFileSync(paths.rotated(1), line('x/a.json', 'a1') + line('x/b.json', 'b1'));
  writeFileSync(paths.current, line('x/a.json', 'a2') + line('x/gone.json', null) + line('../evil', 'no') + '{"p":"x/c.json","t":"ha');
  assert.is(await replayJournal(layout, log, async () => undefined), 3);
  assert.is(readFileSync(join(layout.sdd, 'x/a.json'), 'utf8'), 'a2');
  assert.is(readFileSync(join(layout.sdd, 'x/b.json'), 'utf8'), 'b1');
  assert.not.ok(existsSync(join(layout.sdd, 'x/gone.json')));
  assert.not.ok(existsSync(join(layout.sdd, 'x/c.json')), 'torn line ignored');
  assert.not.ok(existsSync(join(tmp.dir, 'evil')), 'paths stay inside .sdd');
  assert.equal(journalFiles(paths.dir), []);
  // Same journal again (a crash before the journal was dropped): nothing changes.
  writeFileSync(paths.current, line('x/a.json', 'a2') + line('x/gone.json', null));
  assert.is(await replayJournal(layout, log, async () => undefined), 0);
  assert.is(readFileSync(join(layout.sdd, 'x/a.json'), 'utf8'), 'a2');
});

journal('replay hands over the audit intents of the journals it drops, in journal order', async () => {
  const { layout, paths } = open();
  mkdirSync(paths.dir, { recursive: true });
  const line = (o: object) => '\n' + JSON.stringify(o) + '\n';
  writeFileSync(paths.rotated(1), line({ p: 'x/a.json', t: 'a1', au: { action: 'task.create', resource_id: 'a' }, at: 5 }));
  writeFileSync(paths.current, line({ p: 'x/b.json', t: 'b1' }) + line({ p: 'x/a.json', t: 'a2', au: { action: 'task.claim', resource_id: 'a' }, at: 7 })
    + line({ p: 'x/c.json', t: 'c1', au: 'not an object' }) + line({ p: '../evil', t: 'no', au: { action: 'x' } }));
  const intents: { entry: Record<string, unknown>; at: number }[] = [];
  assert.is(await replayJournal(layout, log, async () => undefined, intents), 3);
  const expected = [{ entry: { action: 'task.create', resource_id: 'a' }, at: 5 }, { entry: { action: 'task.claim', resource_id: 'a' }, at: 7 }];
  assert.equal(intents, expected);
  assert.equal(journalFiles(paths.dir), [], 'the journals are dropped');
  // Not reconciled yet (a crash right after replay): the next replay hands them over again.
  const again: typeof intents = [];
  await replayJournal(layout, log, async () => undefined, again);
  assert.equal(again, expected);
  await dropAuditIntents(layout);
  const none: typeof intents = [];
  await replayJournal(layout, log, async () => undefined, none);
  assert.equal(none, [], 'forgotten once reconciled');
});

journal('a checkpoint rotates the journal, syncs the filesystem and deletes what is settled', async () => {
  let syncs = 0;
  const { layout, store, paths } = open({ journal: { intervalMs: 50, syncFs: async () => { syncs++; } } });
  await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 });
  for (let i = 0; i < 5; i++) await store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: t.counter + 1 }));
  // Each acknowledged write is in the journal until a checkpoint (timer: 50 ms) has made the files durable.
  // (rotated files stay until after the sync, so before it the lines are in current + rotated files).
  const journaled = () => [paths.current, ...journalFiles(paths.dir).filter((n) => n !== 'journal.jsonl').map((n) => join(paths.dir, n))]
    .filter((f) => existsSync(f)).reduce((n, f) => n + journalLines(f).length, 0);
  if (syncs === 0) assert.is(journaled(), 6);
  await until(() => syncs >= 1 && journalFiles(paths.dir).length === 0);
  assert.ok(syncs >= 1, 'syncfs ran');
  assert.equal(journalFiles(paths.dir), [], 'rotated journal deleted');
  await store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: t.counter + 1 }));
  await store.close();
  assert.equal(journalFiles(paths.dir), [], 'close checkpoints too');
  assert.equal(await store.readJson(layout.task('t01')), { version: 7, counter: 6 });
});

journal('200 concurrent updates of 50 records share far fewer datasyncs than writes', async () => {
  let datasyncs = 0;
  const wrapIo = (io: Pick<FileHandle, 'write' | 'datasync' | 'truncate'>) => ({ ...io, datasync: async () => { datasyncs++; await io.datasync(); } });
  const { layout, store } = open({ journal: { wrapIo, syncFs: async () => undefined } });
  const ids = Array.from({ length: 50 }, (_, i) => `t${String(i).padStart(3, '0')}`);
  await Promise.all(ids.map((id) => store.create<Counter>(layout.task(id), { version: 1, counter: 0 })));
  datasyncs = 0;
  await Promise.all(ids.flatMap((id) => Array.from({ length: 4 }, () => store.update<Counter>(layout.task(id), (t) => ({ ...t, counter: t.counter + 1 })))));
  assert.ok(datasyncs >= 1 && datasyncs < 50, `200 writes took ${datasyncs} datasyncs`);
  for (const id of ids) assert.equal(await store.readJson(layout.task(id)), { version: 5, counter: 4 });
  await store.close();
});

journal('a journal append that hits ENOSPC fails the write and changes nothing; the next write works', async () => {
  let full = false;
  const faults = { beforeWrite: (p: string) => { if (full && p.endsWith('journal.jsonl')) throw errnoError('ENOSPC', p); } };
  const { layout, store, paths } = open({ journal: { faults, syncFs: async () => undefined } });
  await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 });
  full = true;
  for (const attempt of [
    () => store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: 9 })),
    () => store.create<Counter>(layout.task('t02'), { version: 1, counter: 0 }),
    () => store.remove(layout.task('t01')),
  ]) {
    const err = await attempt().catch((e: unknown) => e);
    assert.instance(err, StorageUnavailable);
  }
  assert.equal(await store.readJson(layout.task('t01')), { version: 1, counter: 0 });
  assert.not.ok(existsSync(layout.task('t02')), 'failed create left no file');
  assert.equal(readdirSync(dirname(layout.task('t01'))), ['t01.json'], 'no temp file, no lock left');
  assert.is(journalLines(paths.current).length, 1, 'only the create is journaled');
  full = false;
  assert.equal(await store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: 2 })), { version: 2, counter: 2 });
  await store.close();
});

journal('an ENOSPC on the record file itself journals nothing', async () => {
  const faults = { beforeWrite: (p: string) => { if (p.endsWith('t01.json')) throw errnoError('ENOSPC', p); } };
  const { layout, store, paths } = open({ faults, journal: { syncFs: async () => undefined } });
  assert.instance(await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 }).catch((e: unknown) => e), StorageUnavailable);
  assert.not.ok(existsSync(layout.task('t01')));
  assert.not.ok(existsSync(paths.current) && journalLines(paths.current).length > 0, 'no journal line');
  await store.close();
});

journal('a rotated journal waits while one of its records is locked by a writer (pure rule)', () => {
  const f1 = lastEntries([{ p: 'a', t: '1' }, { p: 'b', t: '1' }]);
  const f2 = lastEntries([{ p: 'a', t: '2' }]);
  assert.is(settledCount([f1, f2], new Set(), new Set(['b'])), 0, 'b is between its journal line and its file');
  assert.is(settledCount([f1, f2], new Set(), new Set(['a'])), 1, 'f1 goes (a superseded, b done); f2 waits for a');
  assert.is(settledCount([f1, f2], new Set(['b']), new Set(['a', 'b'])), 1, 'b superseded by the current journal; f2 waits for a');
  assert.is(settledCount([f1, f2], new Set(), new Set()), 2);
});

journal.run();
