import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createRecordStore } from '../../src/store/records/shared.ts';
import { RecordExists, RecordMissing, VersionConflict, type Note } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

type Counter = { version: number; counter: number; title?: string };
const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

const records = suite('store records');
let tmp: ReturnType<typeof makeTempDir>;
records.before.each(() => {
  tmp = makeTempDir('svc-records-');
});
records.after.each(() => tmp.cleanup());

const open = () => {
  const layout = sddLayout(tmp.dir);
  const touched: [string, Note | undefined][] = [];
  const store = createRecordStore({ layout, log: silentLogger(), committer: { touch: (abs, note) => touched.push([abs, note]) } });
  return { layout, store, touched };
};

records('8 processes × 125 updates of one record lose none (counter 1000, version 1001)', async () => {
  const { layout, store } = open();
  await store.create<Counter>(layout.task('t01'), { version: 1, counter: 0 });
  const children = Array.from({ length: 8 }, () =>
    run(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'counter.ts'), tmp.dir, 't01', '125'], { timeout: 50_000 }));
  const outs = await Promise.all(children);
  assert.equal(outs.map((o) => o.stdout.trim()), Array(8).fill('done 125'));
  const final = await store.readJson<Counter>(layout.task('t01'));
  assert.equal(final, { version: 1001, counter: 1000 });
  assert.not.ok(existsSync(layout.task('t01') + '.lock'), 'lock released');
  assert.equal(readdirSync(dirname(layout.task('t01'))), ['t01.json']);
});

records('an update with a stale expected version fails with the current record and writes nothing', async () => {
  const { layout, store } = open();
  await store.create<Counter>(layout.task('t02'), { version: 1, counter: 0 });
  await store.update<Counter>(layout.task('t02'), (t) => ({ ...t, counter: 5 }), { expectedVersion: 1 });
  try {
    await store.update<Counter>(layout.task('t02'), (t) => ({ ...t, counter: 99 }), { expectedVersion: 1 });
    assert.unreachable('stale version must conflict');
  } catch (err) {
    assert.instance(err, VersionConflict);
    const c = err as VersionConflict<Counter>;
    assert.is(c.expected, 1);
    assert.equal(c.current, { version: 2, counter: 5 });
  }
  assert.equal(await store.readJson(layout.task('t02')), { version: 2, counter: 5 });
});

records('a shared tree has other writers: a caller\'s copy of the record is not trusted, the file is read', async () => {
  const { layout, store } = open();
  const abs = layout.task('t05');
  const stale = await store.create<Counter>(abs, { version: 1, counter: 0 });
  writeFileSync(abs, JSON.stringify({ version: 4, counter: 40 })); // another process changed it
  let seen: Counter | undefined;
  const next = await store.update<Counter>(abs, (t) => ({ ...t, counter: t.counter + 1 }), { current: () => stale, written: (n) => { seen = n; } });
  assert.equal(next, { version: 5, counter: 41 });
  assert.equal(seen, next, 'written is told the new record');
});

records('32 concurrent updates expecting the same version: exactly one wins', async () => {
  const { layout, store } = open();
  await store.create<Counter>(layout.task('t03'), { version: 1, counter: 0 });
  const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) =>
    store.update<Counter>(layout.task('t03'), (t) => ({ ...t, counter: i }), { expectedVersion: 1 })));
  assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof VersionConflict));
  assert.is((await store.readJson<Counter>(layout.task('t03')))!.version, 2);
});

records('a throwing mutate writes nothing and releases the lock', async () => {
  const { layout, store, touched } = open();
  await store.create<Counter>(layout.task('t04'), { version: 1, counter: 0 }, 'create t04');
  const before = readFileSync(layout.task('t04'), 'utf8');
  try {
    await store.update<Counter>(layout.task('t04'), (t) => { t.counter = 7; throw new Error('refused'); });
    assert.unreachable();
  } catch (err) {
    assert.is((err as Error).message, 'refused');
  }
  assert.is(readFileSync(layout.task('t04'), 'utf8'), before);
  const next = await store.update<Counter>(layout.task('t04'), (t) => ({ ...t, title: 'ok' }), { note: 'retitle t04' });
  assert.is(next.version, 2);
  assert.equal(touched.map(([, n]) => n), ['create t04', 'retitle t04']);
});

records('missing and existing records are typed errors; remove is idempotent', async () => {
  const { layout, store } = open();
  for (const id of ['t05', 'zz']) {
    try {
      await store.update<Counter>(layout.task(id), (t) => t);
      assert.unreachable();
    } catch (err) {
      assert.instance(err, RecordMissing);
    }
  }
  await store.create<Counter>(layout.task('t05'), { version: 1, counter: 0 });
  try {
    await store.create<Counter>(layout.task('t05'), { version: 1, counter: 1 });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, RecordExists);
  }
  await store.remove(layout.task('t05'));
  await store.remove(layout.task('t05'));
  assert.is(await store.readJson(layout.task('t05')), undefined);
});

records('only committed paths are marked for the state commit', async () => {
  const { layout, store, touched } = open();
  await store.writeJson(layout.agent('s1'), { pid: 1 });
  await store.writeJson(layout.tokens, { a: 1 });
  await store.appendJsonl(layout.metricsRuns, { run: 1 }, 'run 1');
  await store.writeJson(layout.tenants, { t: 1 }, 'tenants');
  assert.equal(touched, [[layout.metricsRuns, 'run 1'], [layout.tenants, 'tenants']]);
  assert.equal(await store.readJsonl(layout.metricsRuns), [{ run: 1 }]);
  await store.close();
});

records.run();
