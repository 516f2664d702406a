import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appendLog } from '../../src/store/append-log.ts';
import { errnoError } from '../../src/store/disk.ts';
import { dataOf } from '../../src/store/prealloc.ts';
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

log('a batch in pieces lands byte for byte: multi-byte text, a batch larger than the shared buffer, two logs in turn', async () => {
  const a = join(tmp.dir, 'a.jsonl');
  const b = join(tmp.dir, 'b.jsonl');
  const wide = `{"t":"${'ü€𝄞'.repeat(1000)}"}\n`; // 2-, 3- and 4-byte characters
  const big = `{"t":"${'x'.repeat(600_000)}"}\n`; // three times its length is beyond the shared 1 MiB buffer
  const la = appendLog<string[]>(a, { encode: (items) => items.flat() });
  const lb = appendLog(b);
  await Promise.all([la.append(['{"n":', '1}\n', wide]), lb.append(big), la.append([big]), lb.append(wide)]);
  await Promise.all([la.close(), lb.close()]);
  assert.is(readFileSync(a, 'utf8'), `{"n":1}\n${wide}${big}`);
  assert.is(readFileSync(b, 'utf8'), big + wide);
  assert.is(statSync(a).size, Buffer.byteLength(`{"n":1}\n${wide}${big}`));
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

log('preallocated: zeros on disk past the data, refused batches and whatever followed a crash dropped, rotation starts anew', async () => {
  const file = join(tmp.dir, 'p.jsonl');
  let fail = false;
  const w = appendLog(file, { preallocate: 4096, faults: { beforeWrite: (p) => { if (fail) throw errnoError('EIO', p); } } });
  await w.append('{"n":1}\n');
  const size = statSync(file).size;
  assert.ok(size >= 4096 + 8, `the file has zeros past its data (${size} bytes)`);
  assert.is(readFileSync(file, 'utf8').slice(8).replace(/\0/g, ''), '', 'only zeros follow the data');
  // A batch larger than what is left grows the file by itself and another 4 KiB of zeros.
  const big = `{"big":"${'x'.repeat(6000)}"}\n`;
  await w.append(big);
  assert.ok(statSync(file).size >= 8 + big.length + 4096, 'grown past the large batch');
  fail = true;
  await w.append('{"lost":1}\n').then(() => assert.unreachable('refused'), () => undefined);
  fail = false;
  await w.append('{"n":2}\n');
  assert.is(dataOf(readFileSync(file, 'utf8')), `{"n":1}\n${big}{"n":2}\n`, 'the refused batch left nothing, the next one follows the good data');
  await w.rotate(join(tmp.dir, 'p.1.jsonl'));
  await w.append('{"n":3}\n');
  await w.close();
  assert.is(dataOf(readFileSync(join(tmp.dir, 'p.1.jsonl'), 'utf8')), `{"n":1}\n${big}{"n":2}\n`);
  assert.is(dataOf(readFileSync(file, 'utf8')), '{"n":3}\n', 'a new file after the rotation');
  assert.ok(statSync(file).size >= 4096, 'preallocated too');

  // A crash left a torn line, zeros, then bytes of a batch that was never acknowledged: the data ends at the
  // first NUL (as readers see it), the rest is dropped, and the next batch starts on a line of its own.
  const torn = join(tmp.dir, 'torn.jsonl');
  writeFileSync(torn, Buffer.concat([Buffer.from('{"n":1}\n{"n":2,"to'), Buffer.alloc(100), Buffer.from('{"ghost":1}\n'), Buffer.alloc(50)]));
  const again = appendLog(torn, { preallocate: 1024, durable: false });
  await again.append('{"n":3}\n');
  await again.close();
  const text = readFileSync(torn, 'utf8');
  assert.is(dataOf(text), '{"n":1}\n{"n":2,"to\n{"n":3}\n');
  assert.not.ok(text.includes('ghost'), 'what followed the first NUL is gone from the file');
});

log.run();
