import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TickLoop } from '../../src/agents/index.ts';

const T = suite('tick loop');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function slowJob(ms: number) {
  const stats = { runs: 0, active: 0, maxActive: 0 };
  const job = async () => {
    stats.runs++;
    stats.active++;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    await sleep(ms);
    stats.active--;
  };
  return { stats, job };
}

T('ticks never overlap, and a tick slower than the interval is not stacked', async () => {
  const { stats, job } = slowJob(100);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined });
  loop.start(10);
  await sleep(420);
  await loop.stop();
  assert.is(stats.maxActive, 1);
  assert.ok(stats.runs >= 3 && stats.runs <= 5, `runs ${stats.runs}`);
});

T('a burst of requests during a tick makes exactly one more tick', async () => {
  const { stats, job } = slowJob(60);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined });
  loop.start();
  loop.request();
  await sleep(20);
  for (let i = 0; i < 10; i++) { loop.request(); await sleep(2); }
  await sleep(250);
  assert.is(stats.runs, 2);
  await loop.stop();
});

T('stop() waits for the tick in progress and no timer fires afterwards', async () => {
  const { stats, job } = slowJob(50);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined });
  loop.start(5);
  await sleep(20);
  await loop.stop();
  assert.is(stats.active, 0);
  const after = stats.runs;
  loop.request();
  await sleep(60);
  assert.is(stats.runs, after);
});

T('a failing tick is reported and the loop goes on', async () => {
  const errors: unknown[] = [];
  let n = 0;
  const loop = new TickLoop(async () => { n++; if (n === 1) throw new Error('boom'); }, { debounceMs: 1, onError: (e) => errors.push(e) });
  await loop.once();
  await loop.once();
  assert.is(n, 2);
  assert.is((errors[0] as Error).message, 'boom');
});

T.run();
