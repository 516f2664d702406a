import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAppenders } from '../../src/store/appenders.ts';
import { readJsonl, readTail } from '../../src/store/jsonl.ts';
import { makeTempDir } from '../helpers/repo.ts';

const jsonl = suite('store jsonl');
let tmp: ReturnType<typeof makeTempDir>;
jsonl.before.each(() => {
  tmp = makeTempDir('svc-jsonl-');
});
jsonl.after.each(() => tmp.cleanup());

jsonl('appends one line per record, creating folders, and reads them back in order', async () => {
  const file = join(tmp.dir, 'a', 'log.jsonl');
  const app = createAppenders();
  await Promise.all(Array.from({ length: 50 }, (_, i) => app.append(file, JSON.stringify({ i, text: 'x\ny' }))));
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
  const app = createAppenders();
  await app.append(file, JSON.stringify({ n: 4 }));
  await app.append(file, JSON.stringify({ n: 5 }));
  await app.close();
  assert.is(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3,"tor\n{"n":4}\n{"n":5}\n');
  assert.equal(await readJsonl(file), [{ n: 1 }, { n: 2 }, { n: 4 }, { n: 5 }]);
});

jsonl('a missing file reads as empty; garbage lines in the middle are skipped', async () => {
  assert.equal(await readJsonl(join(tmp.dir, 'nope.jsonl')), []);
  assert.equal(await readTail(join(tmp.dir, 'nope.jsonl'), 3), { text: '', whole: true });
  const file = join(tmp.dir, 'g.jsonl');
  writeFileSync(file, '{"n":1}\nnot json\n\n{"n":2}\n');
  assert.equal(await readJsonl(file), [{ n: 1 }, { n: 2 }]);
});

jsonl('the tail reader returns the last bytes and says whether they are the whole file', async () => {
  const file = join(tmp.dir, 'big.jsonl');
  for (let i = 0; i < 500; i++) appendFileSync(file, JSON.stringify({ i }) + '\n');
  const tail = await readTail(file, 20);
  assert.is(tail.text, readFileSync(file, 'utf8').slice(-20));
  assert.is(tail.whole, false);
  assert.is((await readTail(file, 1 << 20)).whole, true);
});

jsonl('more files than the open-handle limit keep every line, in order per file', async () => {
  const app = createAppenders({ max: 3 });
  const files = Array.from({ length: 8 }, (_, i) => join(tmp.dir, `f${i}.jsonl`));
  await Promise.all(Array.from({ length: 80 }, (_, k) => app.append(files[k % 8]!, JSON.stringify({ k }))));
  await app.close();
  for (const [i, f] of files.entries()) assert.equal((await readJsonl<{ k: number }>(f)).map((r) => r.k), Array.from({ length: 10 }, (_, j) => i + 8 * j));
});

jsonl.run();
