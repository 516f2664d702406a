import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { groupWriter } from '../../src/store/jsonl.ts';
import { makeTempDir } from '../helpers/repo.ts';

test('concurrent writes share datasyncs and land whole, in call order', async () => {
  const tmp = makeTempDir();
  const fh = await open(join(tmp.dir, 'g.jsonl'), 'a+');
  let syncs = 0;
  const counted = Object.assign(Object.create(fh) as typeof fh, { datasync: async () => { syncs++; await fh.datasync(); } });
  const w = groupWriter(counted, 0);
  await Promise.all(Array.from({ length: 50 }, (_, i) => w.write(`{"n":${i}}\n`)));
  const lines = (await readFile(join(tmp.dir, 'g.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l).n);
  assert.equal(lines, Array.from({ length: 50 }, (_, i) => i));
  assert.ok(syncs < 50 && syncs >= 1, `50 writes took ${syncs} datasyncs`);
  await fh.close();
  tmp.cleanup();
});

test('a failed batch is taken back and every later write is refused (the owner must reopen)', async () => {
  const tmp = makeTempDir();
  const file = join(tmp.dir, 'g.jsonl');
  const fh = await open(file, 'a+');
  let fail = false;
  const w = groupWriter(fh, 0, { beforeWrite: () => { if (fail) throw Object.assign(new Error('no space'), { code: 'ENOSPC' }); } });
  await w.write('{"ok":1}\n');
  fail = true;
  const refused = await Promise.allSettled([w.write('{"lost":1}\n'), w.write('{"lost":2}\n')]);
  assert.ok(refused.every((r) => r.status === 'rejected'));
  fail = false;
  await w.write('{"after":1}\n').then(() => assert.unreachable('a broken writer accepted a write'), () => undefined);
  assert.is(await readFile(file, 'utf8'), '{"ok":1}\n', 'nothing of the failed batch stays');
  await fh.close();
  tmp.cleanup();
});

test.run();
