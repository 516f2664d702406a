// The limiters over HTTP with a manual clock, and forwarding headers that must not buy a fresh budget.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { call, startProxy, startTestSite, type TestSite } from '../helpers/site.ts';

const MIN = 60_000;
const PROXY_ADDR = '127.0.0.254';
let site: TestSite;
let fake: FakeOpenAI;
let proxy: Awaited<ReturnType<typeof startProxy>>;
const L = suite('site limits');
L.before(async () => {
  fake = await startFakeOpenAI({ text: 'Worktrees [1].' });
  site = await startTestSite((o) => { o.trustProxy = [PROXY_ADDR]; o.model = { url: fake.url, model: 'm', timeoutMs: 2000 }; o.assistant = { limit: 3, windowMs: 60 * MIN }; });
  proxy = await startProxy(site.url, PROXY_ADDR);
});
L.after(async () => { await proxy.close(); await site.cleanup(); await fake.close(); });

const notify = (via: string, from: string, n: number, headers: Record<string, string> = {}) =>
  call(via, '/api/notify', { body: { email: `u${n}@example.org` }, from, headers });

L('notify window: 5 admitted, then 429 until the oldest request is 10 minutes old', async () => {
  const from = '127.0.3.1';
  const statuses = [];
  for (let i = 0; i < 5; i++) { statuses.push((await notify(site.url, from, i)).status); site.clock.advance(MIN); }
  const denied = await notify(site.url, from, 5);
  assert.equal([...statuses, denied.status], [200, 200, 200, 200, 200, 429]);
  assert.is(denied.headers['retry-after'], '300');
  site.clock.advance(5 * MIN - 1000);
  assert.is((await notify(site.url, from, 6)).status, 429, 'one second early');
  site.clock.advance(1000);
  assert.is((await notify(site.url, from, 7)).status, 200, 'the first request left the window');
  assert.is((await notify(site.url, from, 8)).status, 429);
});

L('a direct client rotating X-Forwarded-For (and other forwarding headers) keeps one budget', async () => {
  const from = '127.0.3.2';
  const rs = [];
  for (let i = 0; i < 8; i++) {
    rs.push((await notify(site.url, from, i, { 'x-forwarded-for': `198.51.100.${i}`, 'x-real-ip': `203.0.113.${i}`, 'cf-connecting-ip': `192.0.2.${i}` })).status);
  }
  assert.equal(rs, [200, 200, 200, 200, 200, 429, 429, 429]);
});

L('through the trusted proxy: the address the proxy saw is the client; a spoofed left part is ignored', async () => {
  const rs = [];
  for (let i = 0; i < 7; i++) rs.push((await notify(proxy.url, '127.0.3.3', i, { 'x-forwarded-for': `10.9.9.${i}` })).status);
  assert.equal(rs, [200, 200, 200, 200, 200, 429, 429]);
  assert.is((await notify(proxy.url, '127.0.3.4', 0)).status, 200, 'another client behind the same proxy has its own budget');
});

L('a client claiming to be the trusted proxy in X-Forwarded-For gains nothing', async () => {
  const rs = [];
  for (let i = 0; i < 6; i++) rs.push((await notify(site.url, '127.0.3.5', i, { 'x-forwarded-for': `${PROXY_ADDR}, 10.8.8.${i}` })).status);
  assert.equal(rs, [200, 200, 200, 200, 200, 429]);
});

L('assistant limiter (configured 3 per hour here): 429 RATE_LIMITED with Retry-After, then back after the hour', async () => {
  const ask = () => call(site.url, '/api/ask', { body: { query: 'worktrees' }, from: '127.0.3.6' });
  const rs = [];
  for (let i = 0; i < 4; i++) rs.push(await ask());
  assert.equal(rs.map((r) => r.status), [200, 200, 200, 429]);
  assert.equal([rs[3]!.json().error.code, rs[3]!.headers['retry-after']], ['RATE_LIMITED', '3600']);
  assert.is(fake.requests.length, 3, 'a refused ask never reaches the model');
  site.clock.advance(60 * MIN);
  assert.is((await ask()).status, 200);
});

L('summary and summarise have no limiter (the contract), notify and ask budgets are separate', async () => {
  const from = '127.0.3.7';
  for (let i = 0; i < 5; i++) await notify(site.url, from, i);
  assert.is((await notify(site.url, from, 9)).status, 429);
  assert.is((await call(site.url, '/api/ask', { body: { query: 'worktrees' }, from })).status, 200);
  for (let i = 0; i < 40; i++) {
    const r = await call(site.url, '/api/blog/summary', { body: { slug: 'no-such-post', mode: 'quick' }, from });
    assert.is(r.status, 404);
  }
});

L.run();
