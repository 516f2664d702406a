import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { clientKey, createWindowLimiter, slide } from '../../src/site/index.ts';

const L = suite('site limiter');
const MIN = 60_000;

L('slide: admits while fewer than limit in the window, records only admitted requests', () => {
  let stamps: number[] = [];
  const seen: boolean[] = [];
  for (let t = 0; t < 7; t++) {
    const step = slide(stamps, t * 1000, 5, 10 * MIN);
    stamps = step.stamps;
    seen.push(step.decision.allowed);
  }
  assert.equal(seen, [true, true, true, true, true, false, false]);
  assert.is(stamps.length, 5, 'denied requests are not recorded');
});

L('slide: retryAfterSec is the time until the oldest request leaves the window, at least 1', () => {
  const stamps = [0, 1000, 2000, 3000, 4000];
  assert.equal(slide(stamps, 5000, 5, 10 * MIN).decision, { allowed: false, retryAfterSec: 595, count: 5, limit: 5 });
  assert.is(slide(stamps, 10 * MIN - 1, 5, 10 * MIN).decision.retryAfterSec, 1);
  const back = slide(stamps, 10 * MIN, 5, 10 * MIN);
  assert.equal(back.decision, { allowed: true, count: 5, limit: 5 }, 'the oldest left: one slot free');
});

L('window limiter with a manual clock: 5 per 10 minutes per key, budgets independent, slides back', () => {
  const clock = manualClock();
  const l = createWindowLimiter({ limit: 5, windowMs: 10 * MIN, clock });
  for (let i = 0; i < 5; i++) { assert.ok(l.check('a').allowed); clock.advance(MIN); }
  assert.not.ok(l.check('a').allowed);
  assert.ok(l.check('b').allowed, 'another client has its own budget');
  assert.is(l.check('a').retryAfterSec, 300, 'the first request leaves the window in 5 minutes');
  clock.advance(5 * MIN);
  assert.ok(l.check('a').allowed, 'one request left the window');
  assert.not.ok(l.check('a').allowed);
});

L('hammering while denied never extends the wait', () => {
  const clock = manualClock();
  const l = createWindowLimiter({ limit: 2, windowMs: MIN, clock });
  l.check('x'); l.check('x');
  for (let i = 0; i < 50; i++) { clock.advance(1000); l.check('x'); }
  clock.advance(10_000);
  assert.ok(l.check('x').allowed, 'a minute after the first admitted request the budget is back');
});

L('memory stays bounded: at maxKeys expired keys go first, then the least recently used', () => {
  const clock = manualClock();
  const l = createWindowLimiter({ limit: 1, windowMs: MIN, clock, maxKeys: 100 });
  for (let i = 0; i < 100; i++) l.check(`old-${i}`);
  clock.advance(2 * MIN);
  l.check('busy');
  assert.ok(l.size <= 2, `expired keys were dropped (size ${l.size})`);
  for (let i = 0; i < 500; i++) l.check(`k-${i}`);
  assert.ok(l.size <= 100, `never more than maxKeys (size ${l.size})`);
  assert.not.ok(l.check('k-499').allowed, 'a recent key keeps its window');
});

L('clientKey: IPv4 as is, mapped IPv4 unwrapped, IPv6 by /64, empty is one shared "unknown" key', () => {
  assert.is(clientKey('203.0.113.7'), '203.0.113.7');
  assert.is(clientKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.is(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.is(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'the whole /64 shares a budget');
  assert.is.not(clientKey('2001:db8:1:3::1'), clientKey('2001:db8:1:2::1'));
  assert.is(clientKey('::1'), '0:0:0:0::/64');
  assert.is(clientKey(''), 'unknown', 'no address is never "always allowed": it has a budget too');
});

L.run();
