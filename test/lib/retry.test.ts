import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { backoff, retry } from '../../src/lib/retry.ts';
import { manualTimers, sleep } from '../../src/lib/timers.ts';

const T = suite('timers and retry');

T('manual timers fire in time order only when advanced, intervals repeat, cleared ones never', async () => {
  const timers = manualTimers(1000);
  const fired: string[] = [];
  timers.setTimeout(() => fired.push(`b@${timers.now()}`), 20);
  timers.setTimeout(() => fired.push(`a@${timers.now()}`), 10);
  const gone = timers.setTimeout(() => fired.push('never'), 5);
  timers.clearTimeout(gone);
  const tick = timers.setInterval(() => fired.push(`i@${timers.now()}`), 15);
  await timers.advance(9);
  assert.equal(fired, [], 'nothing before its time');
  await timers.advance(25);
  assert.equal(fired, ['a@1010', 'i@1015', 'b@1020', 'i@1030']);
  timers.clearInterval(tick);
  await timers.advance(100);
  assert.is(fired.length, 4);
  assert.is(timers.now(), 1134);
  const ac = new AbortController();
  const waiting = sleep(timers, 1_000_000, ac.signal);
  ac.abort();
  await waiting; // an aborted sleep ends at once
});

T('retry waits a growing delay between tries on the injected timers, and gives up when told', async () => {
  const timers = manualTimers();
  const delays: number[] = [];
  let calls = 0;
  const done = retry(async () => { if (++calls < 4) throw new Error(`try ${calls}`); return 'ok'; }, { timers, minMs: 10, maxMs: 25, onRetry: (_e, _n, ms) => delays.push(ms) });
  for (let i = 0; i < 10 && calls < 4; i++) await timers.advance(25);
  assert.is(await done, 'ok');
  assert.equal(delays, [10, 20, 25]);
  const refused = await retry(async () => { throw Object.assign(new Error('no'), { code: 'EPERM' }); }, { timers, minMs: 1, maxMs: 1, retryable: (e) => (e as { code?: string }).code !== 'EPERM' }).catch((e: Error) => e.message);
  assert.is(refused, 'no', 'an error that is not retryable ends it at once');
  const b = backoff(50, 2000);
  assert.equal([b.next(), b.next(), b.next(), b.current], [50, 100, 200, 200]);
  b.reset();
  assert.is(b.current, 0);
});

T.run();
