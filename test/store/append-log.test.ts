import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendLog } from '../../src/store/append-log.ts';
import { errnoError } from '../../src/store/disk.ts';
import { StorageUnavailable } from '../../src/store/types.ts';
import { makeTempDir } from '../helpers/repo.ts';

const log = suite('store append log');
let tmp: ReturnType<typeof makeTempDir>;
log.before.each(() => { tmp = makeTempDir('svc-append-'); });
log.after.each(() => tmp.cleanup());

log('concurrent appends share datasyncs and land whole, in call order', async () => {
  const file = join(tmp.dir, 'g.jsonl');
  let batches = 0;
  const w = appendLog(file, { written: () => { batches++; } });
  await Promise.all(Array.from({ length: 50 }, (_, i) => w.append(`{"n":${i}}\n`)));
  await w.close();
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).n);
  assert.equal(lines, Array.from({ length: 50 }, (_, i) => i));
  assert.ok(batches < 50 && batches >= 1, `50 appends took ${batches} batches`);
});

log('a refused batch is taken back whole; the batches queued behind it and later appends land after the good data', async () => {
  const file = join(tmp.dir, 'g.jsonl');
  let fail = false;
  const refused: string[][] = [];
  const w = appendLog(file, {
    faults: { beforeWrite: (p) => { if (fail) throw errnoError('ENOSPC', p); } },
    refused: (items) => refused.push(items),
  });
  await w.append('{"ok":1}\n');
  fail = true;
  const lost = await Promise.allSettled([w.append('{"lost":1}\n'), w.append('{"lost":2}\n')]);
  assert.ok(lost.every((r) => r.status === 'rejected' && r.reason instanceof StorageUnavailable));
  assert.equal(refused.flat(), ['{"lost":1}\n', '{"lost":2}\n']);
  fail = false;
  await w.append('{"after":1}\n');
  await w.close();
  assert.is(readFileSync(file, 'utf8'), '{"ok":1}\n{"after":1}\n');
});

log('rotate renames the file between batches; the next batch starts a new one', async () => {
  const file = join(tmp.dir, 'j.jsonl');
  const w = appendLog(file);
  const first = w.append('a\n');
  const rotated = w.rotate(join(tmp.dir, 'j.1.jsonl'));
  const second = w.append('b\n');
  await Promise.all([first, rotated, second]);
  await w.close();
  assert.is(readFileSync(join(tmp.dir, 'j.1.jsonl'), 'utf8'), 'a\n');
  assert.is(readFileSync(file, 'utf8'), 'b\n');
  assert.is(w.written, 4);
});

log('a file torn by a crash is sealed: the next batch starts on a line of its own', async () => {
  const file = join(tmp.dir, 't.jsonl');
  writeFileSync(file, '{"n":1}\n{"n":2,"to');
  const w = appendLog(file, { durable: false });
  await w.append('{"n":3}\n');
  await w.close();
  assert.is(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2,"to\n{"n":3}\n');
  await appendLog(join(tmp.dir, 'never.jsonl')).close();
  assert.not.ok(existsSync(join(tmp.dir, 'never.jsonl')), 'a log that wrote nothing creates no file');
});

log.run();
