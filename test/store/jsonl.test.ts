import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createJsonlAppender, readJsonl, readJsonlTail } from '../../src/store/jsonl.ts';
import { makeTempDir } from '../helpers/repo.ts';

const jsonl = suite('store jsonl');
let tmp: ReturnType<typeof makeTempDir>;
jsonl.before.each(() => {
  tmp = makeTempDir('svc-jsonl-');
});
jsonl.after.each(() => tmp.cleanup());

jsonl('appends one line per record, creating folders, and reads them back in order', async () => {
  const file = join(tmp.dir, 'a', 'log.jsonl');
  const app = createJsonlAppender();
  await Promise.all(Array.from({ length: 50 }, (_, i) => app.append(file, { i, text: 'x\ny' })));
  await app.close();
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.is(lines.length, 51);
  assert.is(lines.at(-1), '');
  assert.equal((await readJsonl<{ i: number }>(file)).map((r) => r.i), Array.from({ length: 50 }, (_, i) => i));
});

jsonl('a torn last line is skipped on read and sealed by the next append', async () => {
  const file = join(tmp.dir, 'log.jsonl');
  writeFileSync(file, '{"n":1}\n{"n":2}\n{"n":3,"tor');
  assert.equal(await readJsonl(file), [{ n: 1 }, { n: 2 }]);
  const app = createJsonlAppender();
  await app.append(file, { n: 4 });
  await app.append(file, { n: 5 });
  await app.close();
  assert.is(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3,"tor\n{"n":4}\n{"n":5}\n');
  assert.equal(await readJsonl(file), [{ n: 1 }, { n: 2 }, { n: 4 }, { n: 5 }]);
});

jsonl('a missing file reads as empty; garbage lines in the middle are skipped', async () => {
  assert.equal(await readJsonl(join(tmp.dir, 'nope.jsonl')), []);
  assert.equal(await readJsonlTail(join(tmp.dir, 'nope.jsonl'), 3), []);
  const file = join(tmp.dir, 'g.jsonl');
  writeFileSync(file, '{"n":1}\nnot json\n\n{"n":2}\n');
  assert.equal(await readJsonl(file), [{ n: 1 }, { n: 2 }]);
});

jsonl('the tail reader returns the last N records across chunk boundaries', async () => {
  const file = join(tmp.dir, 'big.jsonl');
  for (let i = 0; i < 500; i++) appendFileSync(file, JSON.stringify({ i, pad: 'é'.repeat(i % 37) }) + '\n');
  appendFileSync(file, '{"torn":');
  const tail = await readJsonlTail<{ i: number }>(file, 7, 100);
  assert.equal(tail.map((r) => r.i), [493, 494, 495, 496, 497, 498, 499]);
  assert.is((await readJsonlTail(file, 1000, 64)).length, 500);
});

jsonl.run();
