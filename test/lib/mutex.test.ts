import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyedMutex } from '../../src/lib/mutex.ts';

const T = suite('keyed mutex');
const tick = () => new Promise((r) => setImmediate(r));

T('holders of one key run one at a time in arrival order; a throwing holder lets the next run; other keys do not wait', async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  let inside = 0;
  const hold = (key: string, name: string, fail = false) => m.run(key, async () => {
    inside++;
    log.push(`${name}+`);
    assert.ok(key !== 'a' || inside === 1 || log.includes('b+'), 'one holder of a key at a time');
    await tick();
    await tick();
    log.push(`${name}-`);
    inside--;
    if (fail) throw new Error(`${name} failed`);
    return name;
  });
  const runs = [hold('a', 'a1'), hold('a', 'a2', true), hold('a', 'a3'), hold('b', 'b')];
  const settled = await Promise.allSettled(runs);
  assert.equal(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['a1', 'a2 failed', 'a3', 'b']);
  const a = log.filter((l) => l.startsWith('a'));
  assert.equal(a, ['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-'], 'key a in arrival order, never overlapping');
  assert.ok(log.indexOf('b+') < log.indexOf('a1-'), 'key b ran beside a1');
  assert.is(m.size, 0, 'no key is kept once its holders are gone');
});

T('a holder that joins while the last one finishes still waits for it', async () => {
  const m = new KeyedMutex();
  const order: number[] = [];
  let release!: () => void;
  const first = m.run('k', () => new Promise<void>((r) => { release = () => { order.push(1); r(); }; }));
  const second = m.run('k', async () => { order.push(2); });
  await tick();
  assert.equal(order, [], 'the second waits while the first holds');
  release();
  await Promise.all([first, second]);
  assert.equal(order, [1, 2]);
  const third = m.run('k', async () => { order.push(3); });
  await third;
  assert.equal(order, [1, 2, 3]);
  assert.is(m.size, 0);
});

T.run();
