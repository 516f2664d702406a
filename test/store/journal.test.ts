import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { errnoError } from '../../src/store/disk.ts';
import { journalPaths } from '../../src/store/journal.ts';
import { encodeOp, missingLines, parseJournal, replayPlan } from '../../src/store/journal-plan.ts';
import { contentOf, stableStringify } from '../../src/store/records/cas.ts';
import { journalPending, replayJournal } from '../../src/store/journal-replay.ts';
import { dataOf } from '../../src/store/prealloc.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createOwnedStore, type OwnedStoreOptions } from '../../src/store/records/owned.ts';
import { StorageUnavailable } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

type Counter = { version: number; counter: number };
const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/store');
const run = promisify(execFile);
const log = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const journal = suite('store journal');
let tmp: ReturnType<typeof makeTempDir>;
journal.before.each(() => {
  tmp = makeTempDir('svc-journal-');
});
journal.after.each(() => tmp.cleanup());

const open = (extra: Partial<OwnedStoreOptions> = {}) => {
  const layout = sddLayout(tmp.dir);
  const timers = manualTimers();
  const store = createOwnedStore({ layout, log, timers, committer: { touch() {} }, ...extra });
  return { layout, store, timers, paths: journalPaths(layout) };
};
const journalLines = (file: string) => dataOf(readFileSync(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { w: [string, unknown][] });
const journalFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('journal.') && n.endsWith('.jsonl')) : []);
const line = (o: object) => JSON.stringify(o) + '\n';

journal('a checkpoint comes when the board goes quiet, when the oldest change is old, or when the journal is large; not while changes keep coming', async () => {
  const syncs: number[] = [];
  const { layout, store, timers, paths } = open({ journal: { intervalMs: 100, maxAgeMs: 1000, syncFs: async () => { syncs.push(timers.now()); } } });
  const abs = layout.task('q01');
  await store.create<Counter>(abs, { version: 1, counter: 0 });
  // Manual time, then real time until the files are written behind (the checkpoint's first wait): a fixed
  // 20 ms was too little for that on a loaded machine.
  const step = async (ms: number) => { await timers.advance(ms); await sleep(10); for (let i = 0; i < 300 && store.backlog > 0; i++) await sleep(5); };
  const t0 = timers.now();
  // A change every 50 ms (the interval is 100): no checkpoint until the oldest change is 1 s old, then one.
  let firstAt = -1;
  for (let i = 1; i <= 40; i++) {
    await store.update<Counter>(abs, (t) => ({ ...t, counter: i }));
    await step(50);
    if (syncs.length && firstAt < 0) firstAt = syncs[0]! - t0;
  }
  assert.ok(firstAt >= 1000, `no checkpoint while changes keep coming, before the oldest is 1 s old (first at ${firstAt} ms)`);
  assert.ok(syncs.length >= 1, 'the oldest change reached 1 s: checkpoint, changes coming or not');
  for (let i = 0; i < 20 && journalFiles(paths.dir).some((n) => n !== 'journal.jsonl'); i++) await step(10);
  // Quiet: the next checkpoint follows within two intervals of the last change.
  await store.update<Counter>(abs, (t) => ({ ...t, counter: 100 }));
  const before = syncs.length;
  await step(100);
  await step(100);
  await step(5);
  assert.is(syncs.length, before + 1, 'quiet for an interval: checkpoint');
  assert.equal(journalFiles(paths.dir), [], 'and the journal is gone');
  await store.close();
  // Size: past maxBytes the next change starts a checkpoint at once, the clock standing still.
  const big = open({ journal: { intervalMs: 100_000, maxAgeMs: 100_000, maxBytes: 4096, syncFs: async () => { syncs.push(-1); } } });
  const n = syncs.length;
  for (let i = 0; i < 20; i++) await big.store.update<{ version: number; pad: string }>(big.layout.task('q02'), (t) => ({ version: t?.version ?? 1, pad: 'x'.repeat(500) }), {}).catch(() => big.store.create(big.layout.task('q02'), { version: 1, pad: 'x'.repeat(500) }));
  // Real time only for the checkpoint's own work to run (up to 5 s on a loaded machine; 0.5 s was once too little in CI).
  for (let i = 0; i < 500 && syncs.length === n; i++) await sleep(10);
  assert.ok(syncs.length > n, 'a journal past maxBytes is checkpointed without waiting for time');
  await big.store.close();
});

journal('a write killed between its journal line and its file is restored by replay', async () => {
  const { layout, paths } = open();
  const child = join(tmp.dir, 'child.mts');
  writeFileSync(child, `
    import { silentLogger } from '${src}/../lib/log.ts';
    import { errnoError } from '${src}/disk.ts';
    import { sddLayout } from '${src}/layout.ts';
    import { createOwnedStore } from '${src}/records/owned.ts';
    const layout = sddLayout(${JSON.stringify(tmp.dir)});
    let block = false;
    const store = createOwnedStore({ layout, log: silentLogger(), committer: { touch() {} },
      faults: { beforeWrite: (p) => { if (block && p.endsWith('t01.json')) throw errnoError('EIO', p); } } });
    await store.create(layout.task('t01'), { version: 1, counter: 0 });
    await store.close();
    const again = createOwnedStore({ layout, log: silentLogger(), committer: { touch() {} },
      faults: { beforeWrite: (p) => { if (block && p.endsWith('t01.json')) throw errnoError('EIO', p); } } });
    block = true;
    await again.update(layout.task('t01'), (t) => ({ ...t, counter: 7 }));
    process.kill(process.pid, 'SIGKILL');
  `);
  const out = await run(process.execPath, ['--import', 'tsx', child], { timeout: 30_000 }).catch((err: { signal?: string; stdout: string }) => err);
  assert.is((out as { signal?: string }).signal, 'SIGKILL', JSON.stringify(out).slice(0, 2000));
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 1, counter: 0 }, 'file not written yet');
  const last = journalLines(paths.current).at(-1)!;
  assert.equal(last.w[0]![1], { counter: 7, version: 2 }, 'the journal line was on disk first');
  assert.is((await replayJournal(layout, log, async () => undefined)).files, 1);
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 2, counter: 7 });
  assert.equal(journalFiles(paths.dir), [], 'journal dropped after replay');
});

journal('replay writes the last text per path, deletes null entries, skips a torn tail, and is idempotent', async () => {
  const { layout, paths } = open();
  mkdirSync(paths.dir, { recursive: true });
  mkdirSync(join(layout.sdd, 'x'), { recursive: true });
  writeFileSync(join(layout.sdd, 'x/gone.json'), 'old\n');
  writeFileSync(paths.rotated(1), line({ w: [['x/a.json', 'a1'], ['x/b.json', 'b1']] }));
  // An older journal format ({p, t}) still replays; a torn last line is skipped whole.
  writeFileSync(paths.current, line({ p: 'x/a.json', t: 'a2' }) + line({ w: [['x/gone.json', null]] }) + line({ w: [['../evil', 'no']] }) + '{"w":[["x/c.json","ha');
  assert.is((await replayJournal(layout, log, async () => undefined)).files, 3);
  assert.is(readFileSync(join(layout.sdd, 'x/a.json'), 'utf8'), 'a2');
  assert.is(readFileSync(join(layout.sdd, 'x/b.json'), 'utf8'), 'b1');
  assert.not.ok(existsSync(join(layout.sdd, 'x/gone.json')));
  assert.not.ok(existsSync(join(layout.sdd, 'x/c.json')), 'torn line ignored');
  assert.not.ok(existsSync(join(tmp.dir, 'evil')), 'paths stay inside .sdd');
  assert.equal(journalFiles(paths.dir), []);
  // Same journal again (a crash before the journal was dropped): nothing changes.
  writeFileSync(paths.current, line({ w: [['x/a.json', 'a2'], ['x/gone.json', null]] }));
  assert.is((await replayJournal(layout, log, async () => undefined)).files, 0);
  assert.is(readFileSync(join(layout.sdd, 'x/a.json'), 'utf8'), 'a2');
});

journal('replay appends exactly the journaled lines a file lacks, sealing a torn last line, whatever was written before the crash', async () => {
  const { layout, paths } = open();
  mkdirSync(paths.dir, { recursive: true });
  const journaled = ['{"n":3}', '{"n":4}', '{"n":5}'];
  const file = join(layout.sdd, 'archive', 'tasks.jsonl');
  for (const before of ['{"n":1}\n{"n":2}\n', '{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n{"n":5}\n', '{"n":1}\n{"n":2}\n{"n":3}\n{"n":', '']) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, before);
    writeFileSync(paths.current, line({ w: [], a: journaled.map((l) => ['archive/tasks.jsonl', l]) }));
    await replayJournal(layout, log, async () => undefined);
    const lines = readFileSync(file, 'utf8').split('\n');
    assert.equal(lines.filter((l) => /^\{"n":\d\}$/.test(l)), before ? ['{"n":1}', '{"n":2}', ...journaled] : journaled, `after ${JSON.stringify(before)}`);
    assert.is(lines.at(-1), '', 'ends with a newline');
  }
  assert.equal(missingLines('x\n{"a":1}\n{"a":2}\n{"a', false, ['{"a":1}', '{"a":2}', '{"a":3}']), { missing: ['{"a":3}'], seal: true });
  assert.equal(missingLines('{"a":2}\n', true, ['{"a":1}', '{"a":2}']), { missing: ['{"a":1}', '{"a":2}'], seal: false }, 'a file that ends otherwise lacks them all');
  assert.equal(replayPlan(parseJournal(line({ w: [['a', '1']], a: [['l', 'x']] }) + line({ w: [['a', '2']], a: [['l', 'y']] }))), { texts: new Map([['a', '2']]), appends: new Map([['l', ['x', 'y']]]) });
});

journal('a journal line carries records and object lines as JSON values: replay gets back the same bytes; texts, other lines and old lines too', () => {
  const rec = { b: [1, { d: 'é "q"\n', c: null }], a: 'x', version: 3 };
  const lines = ['{"seq":1,"ts":"t","details":{"to":"done","n":-0.5}}', '"a string line"', '[1,2]'];
  const text = encodeOp([['tasks/ab/x.json', contentOf(rec)], ['config.yaml', 'a: 1\n'], ['gone.json', null]], lines.map((l) => ['audit/d.jsonl', l] as [string, string]));
  assert.ok(text.includes('"tasks/ab/x.json",{"a":"x"'), 'the record as a JSON value, keys sorted');
  assert.not.ok(text.includes('\\"seq\\"'), 'no escaped object line');
  assert.equal(parseJournal(text + '\n'), [{
    w: [['tasks/ab/x.json', stableStringify(rec)], ['config.yaml', 'a: 1\n'], ['gone.json', null]],
    a: lines.map((l) => ['audit/d.jsonl', l]),
  }]);
  // A line of the previous format (texts and lines as strings) reads as before.
  assert.equal(parseJournal(line({ w: [['tasks/ab/x.json', stableStringify(rec)]], a: [['audit/d.jsonl', lines[0]]] })), [{ w: [['tasks/ab/x.json', stableStringify(rec)]], a: [['audit/d.jsonl', lines[0]]] }]);
});

journal('a checkpoint rotates the journal, syncs the filesystem and deletes what is settled', async () => {
  let syncs = 0;
  const { layout, store, paths, timers } = open({ journal: { intervalMs: 50, syncFs: async () => { syncs++; } } });
  await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 });
  for (let i = 0; i < 5; i++) await store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: t.counter + 1 }));
  // Each acknowledged write is in the journal until a checkpoint has made the files durable.
  assert.is(journalLines(paths.current).length, 6);
  // Manual time for the checkpoint timer, polling (bounded) for the IO it starts.
  for (const until = Date.now() + 15_000; journalFiles(paths.dir).length;) {
    if (Date.now() > until) throw new Error('no checkpoint dropped the journal');
    await timers.advance(50);
    await sleep(5);
  }
  assert.ok(syncs >= 1, 'syncfs ran');
  assert.equal(journalFiles(paths.dir), [], 'rotated journal deleted');
  await store.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: t.counter + 1 }));
  await store.close();
  assert.equal(journalFiles(paths.dir), [], 'close checkpoints too');
  assert.equal(await store.readJson(layout.task('t01')), { version: 7, counter: 6 });
});

journal('200 concurrent updates of 50 records share far fewer journal writes than updates', async () => {
  let writes = 0;
  const { layout, store } = open({ journal: { syncFs: async () => undefined }, faults: { beforeWrite: (p) => { if (p.endsWith('journal.jsonl')) writes++; } } });
  const ids = Array.from({ length: 50 }, (_, i) => `t${String(i).padStart(3, '0')}`);
  await Promise.all(ids.map((id) => store.create<Counter>(layout.task(id), { version: 1, counter: 0 })));
  writes = 0;
  await Promise.all(ids.flatMap((id) => Array.from({ length: 4 }, () => store.update<Counter>(layout.task(id), (t) => ({ ...t, counter: t.counter + 1 })))));
  assert.ok(writes >= 1 && writes < 50, `200 updates took ${writes} journal writes`);
  for (const id of ids) assert.equal(await store.readJson(layout.task(id)), { version: 5, counter: 4 });
  await store.close();
});

journal('a journal append that hits ENOSPC fails the write and changes nothing; the next write works', async () => {
  let full = false;
  const faults = { beforeWrite: (p: string) => { if (full && p.endsWith('journal.jsonl')) throw errnoError('ENOSPC', p); } };
  const { layout, store, paths } = open({ faults, journal: { syncFs: async () => undefined } });
  await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 });
  await store.close();
  const again = open({ faults, journal: { syncFs: async () => undefined } }).store;
  full = true;
  for (const attempt of [
    () => again.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: 9 })),
    () => again.create<Counter>(layout.task('t02'), { version: 1, counter: 0 }),
    () => again.remove(layout.task('t01')),
  ]) {
    const err = await attempt().catch((e: unknown) => e);
    assert.instance(err, StorageUnavailable);
  }
  assert.equal(await again.readJson(layout.task('t01')), { version: 1, counter: 0 });
  assert.not.ok(existsSync(layout.task('t02')), 'failed create left no file');
  assert.equal(readdirSync(dirname(layout.task('t01'))), ['t01.json'], 'no temp file left');
  assert.is(existsSync(paths.current) ? journalLines(paths.current).length : 0, 0, 'nothing journaled');
  full = false;
  assert.equal(await again.update<Counter>(layout.task('t01'), (t) => ({ ...t, counter: 2 })), { version: 2, counter: 2 });
  await again.close();
});

journal('the journal is preallocated: zeros past its last line; replay reads up to the first NUL, zeros alone are nothing pending', async () => {
  const { layout, store, paths } = open();
  await store.writeJson(layout.task('t01'), { version: 1, counter: 1 });
  const text = readFileSync(paths.current, 'utf8');
  assert.ok(text.length > 64 * 1024 && /^\{[^\0]*\n\0+$/.test(text), `one line, then zeros (${text.length} bytes)`);
  assert.ok(journalPending(layout), 'a journal with a line is pending');
  // Killed here: what follows the first NUL (bytes of a batch never acknowledged) is not replayed.
  writeFileSync(paths.current, dataOf(text) + '\0'.repeat(10) + '\n' + line({ w: [[relative(layout.sdd, layout.task('t01')), { version: 9, counter: 9 }]] }) + '\0'.repeat(10));
  await replayJournal(layout, log, async () => undefined);
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 1, counter: 1 }, 'the line before the zeros replayed, the one after not');
  writeFileSync(paths.current, Buffer.alloc(4096));
  assert.not.ok(journalPending(layout), 'a journal of zeros holds nothing');
});

journal.run();
