// /api/blog/summary, /api/ask and /api/ask/summarise against a local OpenAI-compatible fake.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { call, sseEvents, startTestSite, type TestSite } from '../helpers/site.ts';

const SUMMARY = JSON.stringify({ format: 'bullets', items: ['Each agent has a worktree.', 'Gates run before merge.'], whyItMatters: 'Agents never clobber each other.' });
let fake: FakeOpenAI;
let site: TestSite;
const model = (timeoutMs = 400) => ({ url: fake.url, key: 'sk-test', model: 'fake-model-1', timeoutMs, idleMs: timeoutMs });

const A = suite('site assistant');
A.before(async () => {
  fake = await startFakeOpenAI();
  site = await startTestSite((o) => { o.model = model(); o.assistant = { limit: 30, windowMs: 3_600_000 }; });
});
A.after(async () => { await site.cleanup(); await fake.close(); });
A.before.each(() => { fake.queue = []; fake.requests = []; fake.fallback = { text: 'Hello from the fake model.' }; });

const summary = (slug: string, mode = 'quick') => call(site.url, '/api/blog/summary', { body: { slug, mode } });

A('summary: the model answers once, the second request is served from the cache', async () => {
  fake.fallback = { text: SUMMARY };
  const first = await summary('git-worktrees');
  assert.is(first.status, 200, first.text);
  assert.equal(first.json(), { ok: true, data: { title: 'Agents in git worktrees', format: 'bullets', items: ['Each agent has a worktree.', 'Gates run before merge.'], whyItMatters: 'Agents never clobber each other.', mode: 'quick', model: 'fake-model-1', cached: false } });
  const req = fake.requests[0]!;
  assert.is(req.headers.authorization, 'Bearer sk-test');
  assert.is(req.body.model, 'fake-model-1');
  assert.is(req.body.stream, false);
  assert.match(req.body.messages[1].content, /private checkout/);
  const second = await summary('git-worktrees');
  assert.is(second.json().data.cached, true);
  assert.is(fake.requests.length, 1, 'no second model call');
  assert.ok(readdirSync(join(site.dataDir, 'summaries')).some((f) => f.endsWith('.quick.json')));
  await summary('git-worktrees', 'technical');
  assert.is(fake.requests.length, 2, 'another mode is another summary');
});

A('summary: concurrent requests for one article share one model call', async () => {
  fake.fallback = { text: SUMMARY, chunkDelayMs: 0 };
  const all = await Promise.all([1, 2, 3, 4].map(() => summary('rate-limits', 'takeaways')));
  assert.equal(all.map((r) => r.status), [200, 200, 200, 200]);
  assert.is(fake.requests.length, 1);
});

A('summary: unknown or draft slug → 404 INVALID_ARTICLE; bad params → 400 INVALID_PARAMS', async () => {
  for (const slug of ['no-such-post', 'unreleased-plans']) {
    const r = await summary(slug);
    assert.is(r.status, 404);
    assert.is(r.json().error.code, 'INVALID_ARTICLE');
    assert.is(r.json().ok, false);
    assert.type(r.json().detail, 'string');
  }
  for (const body of [{ slug: 'Git_Worktrees', mode: 'quick' }, { slug: 'git-worktrees', mode: 'poem' }, { slug: 'git-worktrees' }]) {
    const r = await call(site.url, '/api/blog/summary', { body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.json().error.code, 'INVALID_PARAMS');
    assert.ok(r.json().error.details.length >= 1);
  }
  const notJson = await call(site.url, '/api/blog/summary', { body: '{"slug":', headers: { 'content-type': 'application/json' } });
  assert.is(notJson.status, 400);
  assert.is(notJson.json().error.message, 'Body is not valid JSON');
  assert.is(fake.requests.length, 0, 'nothing reached the model');
});

A('summary: a failing model (both attempts) or an unusable answer → 503 TEMPORARILY_UNAVAILABLE, nothing cached', async () => {
  fake.fallback = { status: 500 };
  const r = await summary('git-worktrees', 'takeaways');
  assert.is(r.status, 503);
  assert.is(r.json().error.code, 'TEMPORARILY_UNAVAILABLE');
  assert.is(fake.requests.length, 2, 'retried once');
  fake.fallback = { text: 'Sure! Here is a summary in prose.' };
  assert.is((await summary('git-worktrees', 'takeaways')).status, 503);
  fake.fallback = { text: SUMMARY };
  const ok = await summary('git-worktrees', 'takeaways');
  assert.is(ok.json().data.cached, false, 'the failures were not cached');
});

A('summary: a model that never answers → 503 after the timeout, not a hang', async () => {
  fake.fallback = { hang: true };
  const r = await summary('rate-limits', 'technical');
  assert.is(r.status, 503);
  assert.match(r.json().error.message, /did not answer in time/);
});

A('ask: SSE token frames from the streamed answer, then one citation frame of the cited articles', async () => {
  fake.fallback = { text: 'Each agent works in its own worktree [1].' };
  const r = await call(site.url, '/api/ask', { body: { query: 'How do agents avoid clobbering each other?' } });
  assert.is(r.status, 200);
  assert.match(String(r.headers['content-type']), /text\/event-stream/);
  const events = sseEvents(r.text);
  const tokens = events.filter((e) => e.event === 'token');
  assert.ok(tokens.length > 3, 'streamed in several frames');
  assert.is(tokens.map((e) => e.data.text).join(''), 'Each agent works in its own worktree [1].');
  const last = events[events.length - 1]!;
  assert.is(last.event, 'citations');
  assert.equal(last.data.citations.map((c: any) => [c.n, c.slug]), [[1, 'git-worktrees']]);
  assert.match(last.data.citations[0].url, /^\/blog\/git-worktrees/);
  const sent = fake.requests[0]!.body;
  assert.is(sent.stream, true);
  assert.match(sent.messages[1].content, /\[1\] Agents in git worktrees/);
});

A('ask: an endpoint that answers JSON to a stream request still works (one token frame)', async () => {
  fake.fallback = { text: 'Gates run first [1].', jsonEvenIfStream: true };
  const events = sseEvents((await call(site.url, '/api/ask', { body: { query: 'when is work merged' } })).text);
  assert.equal(events.map((e) => e.event), ['token', 'citations']);
  assert.is(events[0]!.data.text, 'Gates run first [1].');
});

A('ask: nothing in the articles matches → a fixed answer, no citations, no model call', async () => {
  const events = sseEvents((await call(site.url, '/api/ask', { body: { query: 'zebra' } })).text);
  assert.equal(events.map((e) => e.event), ['token', 'citations']);
  assert.equal(events[1]!.data.citations, []);
  assert.is(fake.requests.length, 0);
});

A('ask: upstream 500 → 502 UPSTREAM_FAILED and a model that never answers → 503, both as JSON before any stream', async () => {
  fake.queue = [{ status: 500 }, { hang: true }];
  const bad = await call(site.url, '/api/ask', { body: { query: 'worktrees' } });
  assert.is(bad.status, 502);
  assert.is(bad.json().error.code, 'UPSTREAM_FAILED');
  const slow = await call(site.url, '/api/ask', { body: { query: 'worktrees' } });
  assert.is(slow.status, 503);
  assert.is(slow.json().error.code, 'TEMPORARILY_UNAVAILABLE');
  assert.ok(slow.headers['retry-after']);
});

A('ask: a stream that stalls or reports an error mid-answer ends with one error frame', async () => {
  fake.queue = [{ text: 'one two three four five', stallAfter: 2 }, { streamError: 'overloaded', after: 'Partial ' }];
  const stalled = sseEvents((await call(site.url, '/api/ask', { body: { query: 'worktrees' } })).text);
  assert.equal(stalled.map((e) => e.event), ['token', 'token', 'error']);
  assert.is(stalled[2]!.data.code, 'TEMPORARILY_UNAVAILABLE');
  const failed = sseEvents((await call(site.url, '/api/ask', { body: { query: 'worktrees' } })).text);
  assert.equal(failed.map((e) => e.event), ['token', 'error']);
  assert.is(failed[1]!.data.code, 'UPSTREAM_FAILED');
});

A('ask: a visitor who hangs up mid-answer closes the upstream call', async () => {
  fake.fallback = { text: 'word '.repeat(200), chunkDelayMs: 20 };
  const ctrl = new AbortController();
  const res = await fetch(`${site.url}/api/ask`, { method: 'POST', body: JSON.stringify({ query: 'worktrees' }), headers: { 'content-type': 'application/json' }, signal: ctrl.signal });
  const reader = res.body!.getReader();
  await reader.read();
  ctrl.abort();
  const until = Date.now() + 3000;
  while (fake.aborted === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.ok(fake.aborted >= 1, 'the fake saw its client go away');
});

A('ask: 400 for a missing, empty or too long query; 413 over 8 KB', async () => {
  for (const body of [{}, { query: '' }, { query: '   ' }, { query: 'x'.repeat(2001) }]) {
    const r = await call(site.url, '/api/ask', { body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.json().error.code, 'INVALID_PARAMS');
  }
  const big = await call(site.url, '/api/ask', { body: { query: 'worktrees', pad: 'x'.repeat(9000) } });
  assert.is(big.status, 413);
  assert.is(big.json().error.code, 'PAYLOAD_TOO_LARGE');
});

A('summarise: summary with the cited hit numbers', async () => {
  fake.fallback = { text: 'Worktrees isolate agents [1]; limits hold behind proxies [3].' };
  const hits = [{ title: 'A', excerpt: 'worktrees' }, { title: 'B', excerpt: 'gates', url: '/b' }, { title: 'C', excerpt: 'proxies' }];
  const r = await call(site.url, '/api/ask/summarise', { body: { query: 'what keeps agents apart', hits } });
  assert.is(r.status, 200, r.text);
  assert.equal(r.json(), { ok: true, data: { summary: 'Worktrees isolate agents [1]; limits hold behind proxies [3].', model: 'fake-model-1', citations: [1, 3] } });
  assert.match(fake.requests[0]!.body.messages[1].content, /\[2\] B \(\/b\)/);
});

A('summarise: 400 for 0 or 4 hits and long queries; 502 for a bad upstream; 503 when it is too slow', async () => {
  const hit = { title: 'A', excerpt: 'x' };
  for (const body of [{ query: 'q', hits: [] }, { query: 'q', hits: [hit, hit, hit, hit] }, { query: 'q'.repeat(501), hits: [hit] }, { query: 'q', hits: [{ excerpt: 'x' }] }]) {
    assert.is((await call(site.url, '/api/ask/summarise', { body })).status, 400, JSON.stringify(body).slice(0, 80));
  }
  fake.queue = [{ status: 401 }, { raw: 'not json', contentType: 'application/json' }, { hang: true }];
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await call(site.url, '/api/ask/summarise', { body: { query: 'q', hits: [hit] } })).status);
  assert.equal(statuses, [502, 502, 503]);
});

A('more model calls than maxInFlight at once: the extra one answers 503 at once instead of queueing', async () => {
  const busy = await startTestSite((o) => { o.model = { ...model(5000), maxInFlight: 1 }; });
  fake.fallback = { text: 'word '.repeat(30), chunkDelayMs: 20 };
  try {
    const first = call(busy.url, '/api/ask', { body: { query: 'worktrees' } });
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const second = await call(busy.url, '/api/ask', { body: { query: 'worktrees' } });
    assert.equal([second.status, second.json().error.code, second.headers['retry-after']], [503, 'TEMPORARILY_UNAVAILABLE', '1']);
    assert.is((await first).status, 200);
    assert.is((await call(busy.url, '/api/ask', { body: { query: 'worktrees' } })).status, 200, 'the slot is free again');
  } finally {
    await busy.cleanup();
  }
});

A('without a configured model: summary, ask and summarise answer 503 NOT_CONFIGURED', async () => {
  const bare = await startTestSite();
  try {
    const rs = await Promise.all([
      call(bare.url, '/api/blog/summary', { body: { slug: 'git-worktrees', mode: 'quick' } }),
      call(bare.url, '/api/ask', { body: { query: 'worktrees' } }),
      call(bare.url, '/api/ask/summarise', { body: { query: 'q', hits: [{ title: 'A', excerpt: 'x' }] } }),
    ]);
    for (const r of rs) {
      assert.is(r.status, 503);
      assert.is(r.json().error.code, 'NOT_CONFIGURED');
    }
  } finally {
    await bare.cleanup();
  }
});

A('ask with no articles at all: one error frame RETRIEVAL_UNAVAILABLE', async () => {
  const empty = await startTestSite((o) => { o.model = model(); }, {});
  try {
    const r = await call(empty.url, '/api/ask', { body: { query: 'anything' } });
    assert.is(r.status, 200);
    assert.equal(sseEvents(r.text), [{ event: 'error', data: { code: 'RETRIEVAL_UNAVAILABLE', message: 'no articles are indexed' } }]);
  } finally {
    await empty.cleanup();
  }
});

A('the summary cache survives a restart on the same data folder', async () => {
  fake.fallback = { text: SUMMARY };
  await summary('rate-limits', 'quick');
  const calls = fake.requests.length;
  const again = await startTestSite((o) => { o.model = model(); o.dataDir = site.dataDir; });
  try {
    const r = await call(again.url, '/api/blog/summary', { body: { slug: 'rate-limits', mode: 'quick' } });
    assert.is(r.json().data.cached, true);
    assert.is(fake.requests.length, calls);
  } finally {
    await again.cleanup();
  }
});

A.run();
