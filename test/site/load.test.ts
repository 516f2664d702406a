// Load: 1,000 notify requests from 50 loopback addresses through a trusted forwarding proxy, with
// spoofed X-Forwarded-For on every request, admit exactly 5 per address per 10-minute window.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, startProxy, startTestSite, type TestSite } from '../helpers/site.ts';

const ADDRESSES = 50, PER_ADDRESS = 20, CONCURRENCY = 25;
const PROXY_ADDR = '127.0.0.254';
let site: TestSite;
let proxy: Awaited<ReturnType<typeof startProxy>>;
const T = suite('site notify load');
T.before(async () => {
  site = await startTestSite((o) => { o.trustProxy = [PROXY_ADDR]; });
  proxy = await startProxy(site.url, PROXY_ADDR);
});
T.after(async () => { await proxy.close(); await site.cleanup(); });

// Every request of a round, shuffled, run CONCURRENCY at a time; admitted counts per address.
async function round(tag: string): Promise<{ admitted: Map<string, number>; statuses: Map<number, number> }> {
  const jobs: { from: string; i: number }[] = [];
  for (let a = 1; a <= ADDRESSES; a++) for (let i = 0; i < PER_ADDRESS; i++) jobs.push({ from: `127.0.4.${a}`, i });
  for (let k = jobs.length - 1; k > 0; k--) { const j = (k * 7919) % (k + 1); [jobs[k], jobs[j]] = [jobs[j]!, jobs[k]!]; }
  const admitted = new Map<string, number>(), statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { from, i } = jobs[next++]!;
      const r = await call(proxy.url, '/api/notify', { body: { email: `${tag}-${from}-${i}@example.org` }, from, headers: { 'x-forwarded-for': `10.0.${i}.${next % 250}` } });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) admitted.set(from, (admitted.get(from) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { admitted, statuses };
}

T('1,000 requests, 50 addresses: exactly 5 admitted per address, the rest 429; again after the window', async () => {
  for (const tag of ['w1', 'w2']) {
    const { admitted, statuses } = await round(tag);
    assert.equal(Object.fromEntries(statuses), { 200: ADDRESSES * 5, 429: ADDRESSES * (PER_ADDRESS - 5) }, tag);
    assert.is(admitted.size, ADDRESSES);
    assert.ok([...admitted.values()].every((n) => n === 5), `${tag}: ${JSON.stringify(Object.fromEntries(admitted))}`);
    site.clock.advance(10 * 60_000);
  }
  assert.is(site.deps.subscribers.size, 2 * ADDRESSES * 5, 'every admitted address was stored once');
});

T.run();
