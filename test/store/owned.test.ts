// The store a server uses (exclusive: it holds the server lock): compare-and-set under the in-process
// mutex, acknowledged once the journal line is on disk, files written behind.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { dataOf } from '../../src/store/prealloc.ts';
import { errnoError } from '../../src/store/disk.ts';
import { journalPaths } from '../../src/store/journal.ts';
import { replayJournal } from '../../src/store/journal-replay.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createOwnedStore, type OwnedStoreOptions } from '../../src/store/records/owned.ts';
import { RecordExists, StorageUnavailable, VersionConflict } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

type Counter = { version: number; counter: number };
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/store');
const run = promisify(execFile);
const log = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const owned = suite('store owned by one server');
let tmp: ReturnType<typeof makeTempDir>;
owned.before.each(() => { tmp = makeTempDir('svc-owned-'); });
owned.after.each(() => tmp.cleanup());

// `blockFiles` refuses record files (not the journal): acknowledged writes wait in memory. Time is manual.
const open = (extra: Partial<OwnedStoreOptions> = {}) => {
  const layout = sddLayout(tmp.dir);
  const touched: { rel: string }[] = [];
  let through: ((abs: string) => string | null | undefined) | undefined;
  const state = { blockFiles: false, fullJournal: false };
  const faults = {
    beforeWrite: (p: string) => {
      if (p.endsWith('journal.jsonl') ? state.fullJournal : state.blockFiles) throw errnoError('ENOSPC', p);
    },
  };
  const timers = manualTimers();
  const store = createOwnedStore({
    layout, log, faults, timers, journal: { syncFs: async () => undefined },
    committer: { touch: (abs) => touched.push({ rel: abs.slice(layout.sdd.length + 1) }), readThrough: (fn) => { through = fn; } },
    ...extra,
  });
  // What a state commit reads for a path now (the text still waiting for its file, else undefined).
  const committed = (abs: string) => through?.(abs);
  return { layout, store, touched, committed, state, timers, paths: journalPaths(layout) };
};
// Manual time for the waits (retries, checkpoints), real time for the IO they start.
// Bounded: a store that never settles fails the test in 15 s instead of holding the runner.
const until = async (timers: ReturnType<typeof manualTimers>, done: () => boolean, stepMs = 100) => {
  for (const end = Date.now() + 15_000; !done();) {
    if (Date.now() > end) throw new Error('timed out waiting for the store to settle');
    await timers.advance(stepMs);
    await sleep(5);
  }
};
const fileOf = (abs: string) => (existsSync(abs) ? JSON.parse(readFileSync(abs, 'utf8')) : undefined);
const journalFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => /^journal\..*jsonl$/.test(n)) : []);

owned('32 concurrent updates expecting the same version: exactly one wins, the others conflict', async () => {
  const { layout, store } = open();
  for (let round = 0; round < 10; round++) {
    const abs = layout.task(`r${String(round).padStart(3, '0')}`);
    await store.create<Counter>(abs, { version: 1, counter: 0 });
    const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) =>
      store.update<Counter>(abs, (t) => ({ ...t, counter: i + 1 }), { expectedVersion: 1 })));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.is(won.length, 1, `round ${round}: one winner`);
    assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof VersionConflict));
    assert.equal(await store.readJson(abs), (won[0] as PromiseFulfilledResult<Counter>).value);
  }
  await store.close();
});

owned('an acknowledged write is read back and committed from memory before its file is written; the file follows', async () => {
  const { layout, store } = open();
  const abs = layout.task('t01');
  await store.create<Counter>(abs, { version: 1, counter: 0 });
  await store.close(); // file on disk
  const again = open();
  again.state.blockFiles = true;
  const next = await again.store.update<Counter>(abs, (t) => ({ ...t, counter: 5 }));
  assert.equal(next, { version: 2, counter: 5 });
  assert.equal(fileOf(abs), { version: 1, counter: 0 }, 'the file is behind');
  assert.equal(await again.store.readJson(abs), next, 'reads see the acknowledged write');
  assert.ok(again.touched.some((t) => abs.endsWith(t.rel)), 'the path is marked for the next commit');
  assert.equal(JSON.parse(again.committed(abs)!), next, 'a commit reads the text through the store, not the stale file');
  assert.is(again.store.backlog, 1);
  // A second update builds on the acknowledged value, not on the file.
  assert.equal(await again.store.update<Counter>(abs, (t) => ({ ...t, counter: t.counter + 1 })), { version: 3, counter: 6 });
  again.state.blockFiles = false;
  await until(again.timers, () => again.store.backlog === 0);
  assert.equal(fileOf(abs), { version: 3, counter: 6 });
  await again.store.close();
});

owned('a writer that keeps its own copy of a record (the board) changes it without a read: 32 racing updates still have one winner', async () => {
  const { layout, store } = open();
  const abs = layout.task('c01');
  let mine: Counter | undefined = await store.create<Counter>(abs, { version: 1, counter: 0 });
  const own = { current: () => mine, written: (n: Counter) => { mine = n; } };
  await store.close(); // the file is on disk
  writeFileSync(abs, 'not json: a read would fail here\n');
  const again = open();
  const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) =>
    again.store.update<Counter>(abs, (t) => ({ ...t, counter: i + 1 }), { expectedVersion: 1, ...own })));
  assert.is(results.filter((r) => r.status === 'fulfilled').length, 1, 'one winner, from the copy, not the file');
  assert.is(mine!.version, 2, 'the copy was kept current before the next update ran');
  // Updates in a row each see the one before (written runs before the next compare-and-set).
  await Promise.all(Array.from({ length: 10 }, () => again.store.update<Counter>(abs, (t) => ({ ...t, counter: t.counter + 1 }), own)));
  assert.equal(mine, { version: 12, counter: mine!.counter });
  assert.is(mine!.counter, (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<Counter>).value.counter + 10);
  await again.store.close();
  assert.equal(fileOf(abs), mine, 'the file follows');
});

owned('create, remove and exists rules hold for waiting files too', async () => {
  const { layout, store, state } = open();
  state.blockFiles = true;
  const abs = layout.task('t02');
  await store.create<Counter>(abs, { version: 1, counter: 0 });
  const dup = await store.create<Counter>(abs, { version: 1, counter: 9 }).catch((e: unknown) => e);
  assert.instance(dup, RecordExists, 'a waiting create counts as existing');
  await store.remove(abs);
  assert.is(await store.readJson(abs), undefined, 'a waiting delete reads as absent');
  await store.create<Counter>(abs, { version: 1, counter: 3 });
  state.blockFiles = false;
  await store.close();
  assert.equal(fileOf(abs), { version: 1, counter: 3 });
});

owned('createAll journals every file in one write: a full disk leaves none, and none waits', async () => {
  const { layout, store, state } = open();
  const items = Array.from({ length: 20 }, (_, i) => ({ abs: layout.task(`b${String(i).padStart(3, '0')}`), value: { version: 1, counter: i } }));
  state.fullJournal = true;
  const err = await store.createAll(items).catch((e: unknown) => e);
  assert.instance(err, StorageUnavailable);
  state.fullJournal = false;
  for (const i of items) assert.is(await store.readJson(i.abs), undefined, 'nothing of a refused batch');
  assert.is(store.backlog, 0);
  await store.createAll(items);
  const exists = await store.createAll(items.slice(0, 1)).catch((e: unknown) => e);
  assert.instance(exists, RecordExists);
  await store.close();
  for (const i of items) assert.equal(fileOf(i.abs), i.value);
});

owned('a checkpoint drops the journal only once every file is written', async () => {
  const { layout, store, state, timers, paths } = open({ journal: { intervalMs: 30, syncFs: async () => undefined } });
  state.blockFiles = true;
  await store.create<Counter>(layout.task('t03'), { version: 1, counter: 0 });
  for (let i = 0; i < 10; i++) { await timers.advance(30); await sleep(5); }
  assert.ok(journalFiles(paths.dir).length >= 1, 'journal kept while the file is not written');
  state.blockFiles = false;
  await until(timers, () => journalFiles(paths.dir).length === 0, 30); // the publisher's retry backoff, then the next checkpoint
  assert.equal(fileOf(layout.task('t03')), { version: 1, counter: 0 });
  assert.equal(journalFiles(paths.dir), [], 'journal dropped after the files were written');
  await store.close();
});

owned('under a steady stream of changes no journal piles up, and at the close every change is on its file and the journal is gone', async () => {
  const { layout, store, timers, paths } = open({ journal: { intervalMs: 30, syncFs: async () => undefined } });
  const files = Array.from({ length: 32 }, (_, i) => layout.task(`t05-${i}`));
  for (const abs of files) await store.create<Counter>(abs, { version: 1, counter: 0 });
  let stop = false;
  let made = 0;
  // 32 writers: changes are delivered while a checkpoint's flush runs, so the publisher is seldom empty.
  const writers = Promise.all(files.map(async (abs) => { while (!stop) { await store.update<Counter>(abs, (t) => ({ ...t, counter: t.counter + 1 })); made++; } }));
  // A checkpoint rotates the journal (a new one starts with the next change), then drops what it rotated out:
  // never more than the journal and one rotated file. (Whether one runs at all while the writers never pause
  // is the age limit's business, tested in journal.test.ts.)
  let most = 0;
  try {
    for (let i = 0; i < 60; i++) {
      await timers.advance(30);
      await sleep(5);
      most = Math.max(most, journalFiles(paths.dir).length);
    }
  } finally {
    stop = true;
    await writers;
  }
  assert.ok(made > 100, `the writers kept writing (${made} changes)`);
  assert.ok(most <= 2, `no rotated journal left behind, saw ${most} at once`);
  await store.close();
  assert.equal(journalFiles(paths.dir), []);
  const counts = files.map((abs) => fileOf(abs) as Counter);
  assert.ok(counts.every((c) => c.version === c.counter + 1), 'every file has its last change');
  assert.is(counts.reduce((n, c) => n + c.counter, 0), made);
});

owned('a change\'s audit record and appended lines ride in its journal line, signed in order; the journal stays until they are in their files', async () => {
  const seq = { n: 0 };
  const sealer = { seal: (e: { action: string }) => ({ abs: join(tmp.dir, '.sdd', 'audit', 'a.jsonl'), line: JSON.stringify({ seq: ++seq.n, action: e.action }) }), mark: () => seq.n, rewind: (m: unknown) => { seq.n = m as number; } };
  const { layout, store, state, timers, paths } = open({ sealer, journal: { intervalMs: 30, syncFs: async () => undefined } });
  const abs = layout.task('t04');
  const archive = layout.archive;
  state.blockFiles = true;
  await store.create<Counter>(abs, { version: 1, counter: 0 }, { note: 'create t04', effects: { audit: { actor: 'a', action: 'task.create', resource_type: 'task', resource_id: 't04' } } });
  await store.update<Counter>(abs, (t) => ({ ...t, counter: 1 }), { effects: (n) => ({ audit: { actor: 'a', action: `task.bump${n.version}`, resource_type: 'task', resource_id: 't04' }, appends: [{ abs: archive, value: { v: n.version } }] }) });
  const lines = journalFiles(paths.dir).flatMap((n) => dataOf(readFileSync(join(paths.dir, n), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l)));
  // Appended lines and records ride as JSON values, not escaped strings.
  assert.equal(lines.map((l) => l.a), [
    [['audit/a.jsonl', { seq: 1, action: 'task.create' }]],
    [['archive/tasks.jsonl', { v: 2 }], ['audit/a.jsonl', { seq: 2, action: 'task.bump2' }]],
  ]);
  assert.equal(lines.map((l) => l.w), [[['tasks/' + abs.split('/tasks/')[1], { counter: 0, version: 1 }]], [['tasks/' + abs.split('/tasks/')[1], { counter: 1, version: 2 }]]]);
  assert.equal(await store.readJsonl(archive), [{ v: 2 }], 'a waiting line is read back');
  for (let i = 0; i < 10; i++) { await timers.advance(30); await sleep(5); }
  assert.ok(journalFiles(paths.dir).length >= 1, 'journal kept while the lines are not in their files');
  state.blockFiles = false;
  await until(timers, () => journalFiles(paths.dir).length === 0, 30);
  assert.is(readFileSync(join(tmp.dir, '.sdd', 'audit', 'a.jsonl'), 'utf8'), '{"seq":1,"action":"task.create"}\n{"seq":2,"action":"task.bump2"}\n');
  assert.is(readFileSync(archive, 'utf8'), '{"v":2}\n');
  state.fullJournal = true;
  assert.instance(await store.update<Counter>(abs, (t) => t, { effects: () => ({ audit: { actor: 'a', action: 'lost', resource_type: 'task', resource_id: 't04' } }) }).catch((e: unknown) => e), StorageUnavailable);
  state.fullJournal = false;
  await store.update<Counter>(abs, (t) => t, { effects: () => ({ audit: { actor: 'a', action: 'after', resource_type: 'task', resource_id: 't04' } }) });
  await store.close();
  assert.match(readFileSync(join(tmp.dir, '.sdd', 'audit', 'a.jsonl'), 'utf8'), /\{"seq":3,"action":"after"\}\n$/, 'a refused write gives its seq back');
});

owned('SIGKILL with acknowledged writes still waiting for their files: replay restores every one', async () => {
  const layout = sddLayout(tmp.dir);
  const child = join(tmp.dir, 'child.mts');
  writeFileSync(child, `
    import { silentLogger } from '${src}/../lib/log.ts';
    import { errnoError } from '${src}/disk.ts';
    import { sddLayout } from '${src}/layout.ts';
    import { createOwnedStore } from '${src}/records/owned.ts';
    const layout = sddLayout(${JSON.stringify(tmp.dir)});
    let block = false;
    const store = createOwnedStore({ layout, log: silentLogger(), committer: { touch() {} },
      faults: { beforeWrite: (p) => { if (block && !p.endsWith('journal.jsonl')) throw errnoError('EIO', p); } } });
    for (let i = 0; i < 20; i++) await store.create(layout.task('k' + String(i).padStart(3, '0')), { version: 1, counter: 0 });
    await store.close();
    const again = createOwnedStore({ layout, log: silentLogger(), committer: { touch() {} },
      faults: { beforeWrite: (p) => { if (block && !p.endsWith('journal.jsonl')) throw errnoError('EIO', p); } } });
    block = true;
    await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      for (let n = 1; n <= 5; n++) {
        const t = await again.update(layout.task('k' + String(i).padStart(3, '0')), (c) => ({ ...c, counter: n }));
        process.stdout.write(JSON.stringify({ i, version: t.version }) + '\\n');
      }
    }));
    process.kill(process.pid, 'SIGKILL');
  `);
  const out = await run(process.execPath, ['--import', 'tsx', child], { timeout: 30_000 }).catch((err: { signal?: string; stdout: string }) => err);
  assert.is((out as { signal?: string }).signal, 'SIGKILL', JSON.stringify(out).slice(0, 2000));
  const acked = (out as { stdout: string }).stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { i: number; version: number });
  assert.is(acked.length, 100);
  const name = (i: number) => layout.task('k' + String(i).padStart(3, '0'));
  assert.ok(acked.some((a) => fileOf(name(a.i)).version < a.version), 'files were behind the acknowledgements');
  await replayJournal(layout, log, async () => undefined);
  for (const a of acked) assert.ok(fileOf(name(a.i)).version >= a.version, `k${a.i} v${a.version} restored`);
  for (let i = 0; i < 20; i++) assert.equal(fileOf(name(i)), { version: 6, counter: 5 });
});

owned.run();
