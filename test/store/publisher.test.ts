import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { errnoError } from '../../src/store/disk.ts';
import { createPublisher } from '../../src/store/publisher.ts';
import { makeTempDir } from '../helpers/repo.ts';

const log = silentLogger();
const pub = suite('store publisher');
let tmp: ReturnType<typeof makeTempDir>;
pub.before.each(() => { tmp = makeTempDir('svc-publisher-'); });
pub.after.each(() => tmp.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Manual time for the retry waits, real time for the writer thread's answers.
const drained = async (p: { backlog: number }, timers: ReturnType<typeof manualTimers>) => {
  for (const end = Date.now() + 15_000; p.backlog && Date.now() < end;) { await timers.advance(100); await sleep(5); }
};
const temps = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.tmp'));

pub('a put text reaches its file (folder created on demand); peek shows it until then; flush waits for it', async () => {
  const p = createPublisher({ log });
  const file = join(tmp.dir, 'tasks', 'ab', 'x.json');
  p.put(file, 'one\n');
  assert.is(p.peek(file), 'one\n');
  assert.is(p.backlog, 1);
  await p.flush();
  assert.is(readFileSync(file, 'utf8'), 'one\n');
  assert.is(p.peek(file), undefined, 'nothing waits once the file is written');
  assert.is(p.backlog, 0);
  p.put(file, null);
  assert.is(p.peek(file), null, 'a waiting delete peeks as null');
  await p.flush();
  assert.not.ok(existsSync(file));
  await p.close();
});

pub('writes to one path coalesce: the file ends with the newest text after fewer writes than puts', async () => {
  let writes = 0;
  const p = createPublisher({ log, faults: { beforeWrite: () => { writes++; } } });
  const file = join(tmp.dir, 'a.json');
  for (let i = 0; i < 200; i++) {
    p.put(file, `v${i}\n`);
    if (i % 50 === 0) await sleep(1);
  }
  await p.flush();
  assert.is(readFileSync(file, 'utf8'), 'v199\n');
  assert.ok(writes < 200 && writes >= 1, `${writes} writes for 200 puts`);
  assert.equal(temps(tmp.dir), []);
  await p.close();
});

pub('a disk error keeps the text waiting (peek still answers), rejects flush, and is retried until it lands', async () => {
  let full = true;
  const timers = manualTimers();
  const p = createPublisher({ log, timers, faults: { beforeWrite: (path) => { if (full) throw errnoError('ENOSPC', path); } } });
  const file = join(tmp.dir, 'b.json');
  writeFileSync(file, 'old\n');
  p.put(file, 'new\n');
  const err = await p.flush().then(() => undefined, (e: NodeJS.ErrnoException) => e);
  assert.is(err?.code, 'ENOSPC', 'flush reports the failed round');
  assert.is(readFileSync(file, 'utf8'), 'old\n', 'the old file is intact');
  assert.is(p.peek(file), 'new\n', 'the text is still waiting');
  assert.equal(temps(tmp.dir), [], 'no temp file left by the failed write');
  full = false;
  await drained(p, timers);
  assert.is(readFileSync(file, 'utf8'), 'new\n', 'retried once the disk took writes again');
  await p.flush();
  await p.close();
});

pub('room() holds writers back while the backlog is at the high-water mark', async () => {
  let full = true;
  const p = createPublisher({ log, highWater: 3, faults: { beforeWrite: (path) => { if (full) throw errnoError('ENOSPC', path); } } });
  for (let i = 0; i < 3; i++) p.put(join(tmp.dir, `f${i}.json`), `${i}\n`);
  let roomy = false;
  const waiting = p.room().then(() => { roomy = true; });
  await sleep(100);
  assert.not.ok(roomy, 'a writer waits while 3 files are behind');
  full = false;
  await waiting;
  assert.ok(p.backlog < 3);
  await p.close();
  assert.is(readFileSync(join(tmp.dir, 'f2.json'), 'utf8'), '2\n');
});

pub('appended lines reach their file in order; a reader sees each in the file or still waiting', async () => {
  const written: string[] = [];
  let full = false;
  const timers = manualTimers();
  const p = createPublisher({ log, timers, appended: (abs, note) => written.push(`${abs.slice(tmp.dir.length + 1)} ${note}`), faults: { beforeWrite: (path) => { if (full) throw errnoError('ENOSPC', path); } } });
  const file = join(tmp.dir, 'archive', 'a.jsonl');
  const seen = () => [...(existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []), ...p.lines(file)];
  p.append(file, '{"n":1}', 'first');
  p.append(file, '{"n":2}');
  assert.equal(seen(), ['{"n":1}', '{"n":2}']);
  await p.flush();
  assert.is(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n');
  assert.equal(written, ['archive/a.jsonl first', 'archive/a.jsonl undefined']);
  full = true;
  p.append(file, '{"n":3}');
  assert.ok(await p.flush().then(() => false, () => true), 'flush reports the refused line');
  assert.equal(seen(), ['{"n":1}', '{"n":2}', '{"n":3}'], 'the refused line still waits, once');
  full = false;
  await drained(p, timers);
  assert.is(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n');
  await p.close();
});

pub('appended lines do not wait for the text delay: a reader of the file sees an acknowledged line within a turn', async () => {
  const timers = manualTimers();
  const p = createPublisher({ log, timers, delayMs: 50 });
  const file = join(tmp.dir, 'audit', 'day.jsonl');
  const text = join(tmp.dir, 'tasks', 't.json');
  mkdirSync(join(tmp.dir, 'tasks'), { recursive: true });
  p.put(text, '{"v":1}\n'); // the publisher now naps until this text is due
  await sleep(5);
  for (let i = 1; i <= 3; i++) {
    p.append(file, `{"n":${i}}`);
    // No timer advanced: only the append itself may wake the publisher (real time only lets its IO finish).
    const count = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
    for (let end = Date.now() + 2000; count() < i && Date.now() < end;) await sleep(5);
    assert.is(count(), i, `line ${i} is in the file`);
  }
  assert.not.ok(existsSync(text), 'the text still waits for its delay');
  await timers.advance(50);
  await drained(p, timers);
  assert.is(readFileSync(text, 'utf8'), '{"v":1}\n');
  await p.close();
});

pub('close publishes what waits, and gives up after one failed round when the disk refuses', async () => {
  const p = createPublisher({ log });
  mkdirSync(join(tmp.dir, 'd'));
  for (let i = 0; i < 50; i++) p.put(join(tmp.dir, 'd', `f${i}.json`), `${i}\n`);
  await p.close();
  assert.is(readdirSync(join(tmp.dir, 'd')).length, 50);

  const stuck = createPublisher({ log, faults: { beforeWrite: (path) => { throw errnoError('EIO', path); } } });
  stuck.put(join(tmp.dir, 'never.json'), 'x\n');
  const t0 = Date.now();
  await stuck.close();
  assert.ok(Date.now() - t0 < 3000, 'close returns instead of retrying forever');
  assert.is(stuck.backlog, 1, 'the refused file is left to the journal replay');
});

pub.run();
