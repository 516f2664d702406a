// The tick loop on manual timers: the interval, the debounce and the jobs' own waits all run on one clock
// that only the test moves, so run counts do not depend on how busy the machine is.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TickLoop } from '../../src/agents/index.ts';
import { manualTimers, sleep, type ManualTimers } from '../../src/lib/timers.ts';

const T = suite('tick loop');

function slowJob(timers: ManualTimers, ms: number) {
  const stats = { runs: 0, active: 0, maxActive: 0 };
  const job = async () => {
    stats.runs++;
    stats.active++;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    await sleep(timers, ms);
    stats.active--;
  };
  return { stats, job };
}

T('ticks never overlap, and a tick slower than the interval is not stacked', async () => {
  const timers = manualTimers();
  const { stats, job } = slowJob(timers, 100);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined, timers });
  loop.start(10);
  await timers.advance(420);
  const stopped = loop.stop();
  await timers.advance(100);
  await stopped;
  assert.is(stats.maxActive, 1);
  assert.ok(stats.runs >= 3 && stats.runs <= 5, `runs ${stats.runs}`);
});

T('a burst of requests during a tick makes exactly one more tick', async () => {
  const timers = manualTimers();
  const { stats, job } = slowJob(timers, 60);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined, timers });
  loop.start();
  loop.request();
  await timers.advance(20);
  for (let i = 0; i < 10; i++) { loop.request(); await timers.advance(2); }
  await timers.advance(250);
  assert.is(stats.runs, 2);
  await loop.stop();
});

T('stop() waits for the tick in progress and no timer fires afterwards', async () => {
  const timers = manualTimers();
  const { stats, job } = slowJob(timers, 50);
  const loop = new TickLoop(job, { debounceMs: 5, onError: () => undefined, timers });
  loop.start(5);
  await timers.advance(20);
  let stopped = false;
  const stopping = loop.stop().then(() => { stopped = true; });
  await timers.advance(10);
  assert.not.ok(stopped, 'the tick in progress is still running');
  await timers.advance(50);
  await stopping;
  assert.is(stats.active, 0);
  const after = stats.runs;
  loop.request();
  await timers.advance(60);
  assert.is(stats.runs, after);
  assert.is(timers.pending, 0, 'no timer left');
});

T('a failing tick is reported and the loop goes on', async () => {
  const errors: unknown[] = [];
  let n = 0;
  const loop = new TickLoop(async () => { n++; if (n === 1) throw new Error('boom'); }, { debounceMs: 1, onError: (e) => errors.push(e), timers: manualTimers() });
  await loop.once();
  await loop.once();
  assert.is(n, 2);
  assert.is((errors[0] as Error).message, 'boom');
});

T.run();
