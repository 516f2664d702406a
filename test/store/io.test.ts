import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { createExclusive, writeFileAtomic } from '../../src/store/atomic.ts';
import { errnoError } from '../../src/store/disk.ts';
import { contentOf, RecordText, renderRecord, stableStringify, textOf } from '../../src/store/records/cas.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createRecordStore } from '../../src/store/records/shared.ts';
import { RecordExists, StorageUnavailable } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

const io = suite('store io');
let tmp: ReturnType<typeof makeTempDir>;
io.before.each(() => {
  tmp = makeTempDir('svc-io-');
});
io.after.each(() => tmp.cleanup());

io('JSON files have sorted keys at every level, 2-space indent and a trailing newline', () => {
  const text = stableStringify({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } });
  assert.is(text, '{\n  "a": {\n    "c": null,\n    "d": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n');
});

io('stableStringify (and a record held as compact JSON, rendered) writes what a key-sorting replacer writes, for records in any key order', () => {
  // The reference: JSON.stringify with a replacer that sorts every object it meets.
  const reference = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) return x;
    return Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]]));
  }, 2) + '\n';
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const keys = ['a', 'b', 'z', 'id', '10', '9', 'Ä', 'é', '_x', 'version', 'metadata'];
  const value = (depth: number): unknown => {
    const kind = rnd(depth > 2 ? 4 : 7);
    if (kind === 0) return rnd(1000) - 500;
    if (kind === 1) return rnd(2) ? null : 'text "quoted"\n';
    if (kind === 2) return rnd(2) === 1;
    if (kind === 3) return new Date(1_800_000_000_000 + rnd(1000));
    if (kind === 4) return Array.from({ length: rnd(4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = rnd(6); i > 0; i--) o[keys[rnd(keys.length)]!] = value(depth + 1);
    if (rnd(5) === 0) o.skipped = undefined;
    return o;
  };
  for (let i = 0; i < 500; i++) {
    const v = value(0);
    assert.is(stableStringify(v), reference(v));
    // A record held as its compact JSON renders to the same file text.
    const c = contentOf(v);
    assert.is(textOf(c), reference(v));
    if (c instanceof RecordText) assert.is(renderRecord(c.json), reference(v));
  }
  const shared = { a: 1, b: { c: 2 } };
  stableStringify({ z: shared, a: [shared] });
  assert.equal(Object.keys(shared), ['a', 'b'], 'the value written is not changed');
});

io('an atomic write creates missing folders and leaves no temp file', async () => {
  const file = join(tmp.dir, 'x', 'y', 'r.json');
  await writeFileAtomic(file, stableStringify({ z: 1, a: 2 }));
  assert.is(readFileSync(file, 'utf8'), '{\n  "a": 2,\n  "z": 1\n}\n');
  assert.equal(readdirSync(join(tmp.dir, 'x', 'y')), ['r.json']);
});

io('exclusive create refuses an existing file and keeps its content', async () => {
  const file = join(tmp.dir, 'r.json');
  await createExclusive(file, 'first\n');
  try {
    await createExclusive(file, 'second\n');
    assert.unreachable('second create must fail');
  } catch (err) {
    assert.instance(err, RecordExists);
  }
  assert.is(readFileSync(file, 'utf8'), 'first\n');
  assert.equal(readdirSync(tmp.dir), ['r.json']);
});

io('a full disk during a write throws StorageUnavailable and leaves the old file, no temp, no partial file', async () => {
  const layout = sddLayout(tmp.dir);
  let full = false;
  const touched: string[] = [];
  const store = createRecordStore({
    layout, log: silentLogger(), committer: { touch: (abs) => touched.push(abs) },
    faults: { beforeWrite: (p) => { if (full) throw errnoError('ENOSPC', p); } },
  });
  const dir = join(layout.sdd, 'tasks', '01');
  await store.create(layout.task('t01'), { version: 1, title: 'a' });
  full = true;
  for (const attempt of [
    () => store.update<{ version: number; title: string }>(layout.task('t01'), (t) => ({ ...t, title: 'b' })),
    () => store.writeJson(layout.task('t01'), { version: 9 }),
    () => store.create(layout.task('t11'), { version: 1 }),
    () => store.appendJsonl(layout.progress('t01'), { n: 1 }),
  ]) {
    try {
      await attempt();
      assert.unreachable('write must fail');
    } catch (err) {
      assert.instance(err, StorageUnavailable);
      assert.is((err as StorageUnavailable).code, 'ENOSPC');
    }
  }
  assert.equal(readdirSync(dir).sort(), ['t01.json']);
  assert.equal(JSON.parse(readFileSync(layout.task('t01'), 'utf8')), { version: 1, title: 'a' });
  assert.is(readFileSync(layout.progress('t01'), 'utf8'), '');
  assert.is(touched.length, 1, 'only the successful create is marked for commit');
  full = false;
  const after = await store.update<{ version: number; title: string }>(layout.task('t01'), (t) => ({ ...t, title: 'c' }));
  assert.is(after.version, 2);
  await store.close();
});

io('a read-only disk is StorageUnavailable too', async () => {
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.sdd, { recursive: true });
  writeFileSync(layout.tenants, '{}\n');
  const store = createRecordStore({
    layout, log: silentLogger(), committer: { touch() {} },
    faults: { beforeWrite: (p) => { throw errnoError('EROFS', p); } },
  });
  try {
    await store.writeJson(layout.tenants, { a: 1 });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, StorageUnavailable);
    assert.is((err as StorageUnavailable).code, 'EROFS');
  }
  assert.is(readFileSync(layout.tenants, 'utf8'), '{}\n');
  assert.equal(readdirSync(layout.sdd), ['tenants.json']);
});

io.run();
