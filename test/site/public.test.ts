// /api/health, /api/csp-report, /api/notify (with and without SMTP) and /api/indexnow over HTTP.
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/lib/log.ts';
import { startFakeIndexNow, sitemapIndex, urlset, type FakeIndexNow } from '../helpers/fake-indexnow.ts';
import { startFakeSmtp, type FakeSmtp } from '../helpers/fake-smtp.ts';
import { call, startTestSite, type TestSite } from '../helpers/site.ts';

const logged: string[] = [];
const sink = new Writable({ write(chunk, _enc, cb) { logged.push(String(chunk)); cb(); } });
let site: TestSite;
const P = suite('site public endpoints');
P.before(async () => { site = await startTestSite((o) => { o.log = createLogger({ json: true, stream: sink }); o.sha = 'abc123'; }); });
P.after(async () => { await site.cleanup(); });

const csp = (body: string, type = 'application/csp-report', headers: Record<string, string> = {}) =>
  call(site.url, '/api/csp-report', { body, headers: { 'content-type': type, ...headers } });
const report = (n: number) => JSON.stringify({ 'csp-report': { 'document-uri': `https://site/page-${n}`, 'violated-directive': 'script-src', 'blocked-uri': 'https://evil.example/x.js' } });

P('health: status, sha and time', async () => {
  const r = await call(site.url, '/api/health');
  assert.is(r.status, 200);
  assert.equal(r.json(), { status: 'ok', sha: 'abc123', ts: '2026-01-01T00:00:00.000Z', version: r.json().version });
});

P('csp-report: every format is 204, empty, no-store, and logged field by field', async () => {
  const legacy = await csp(report(1));
  assert.is(legacy.status, 204);
  assert.is(legacy.text, '');
  assert.is(legacy.headers['cache-control'], 'no-store');
  const modern = await csp(JSON.stringify([{ type: 'csp-violation', body: { documentURL: 'https://site/modern', effectiveDirective: 'img-src', blockedURL: 'data' } }]), 'application/reports+json');
  assert.is(modern.status, 204);
  const text = logged.join('');
  assert.match(text, /\[csp-report\] .*https:\/\/site\/page-1/);
  assert.match(text, /\[csp-report\].*img-src.*https:\/\/site\/modern/);
});

P('csp-report: wrong type, bad JSON, declared or actual body over 32 KiB: still a silent 204, nothing logged', async () => {
  const before = logged.length;
  const cases = [
    await csp(report(2), 'text/plain'),
    await csp('{not json', 'application/csp-report'),
    await csp(JSON.stringify({ 'csp-report': { 'document-uri': 'x'.repeat(40_000) } }), 'application/json'),
  ];
  for (const r of cases) { assert.is(r.status, 204); assert.is(r.text, ''); assert.is(r.headers['cache-control'], 'no-store'); }
  assert.is(logged.length, before);
});

P('csp-report: a chunked body that grows past 32 KiB is cut off with a silent 204', async () => {
  const r = await new Promise<{ status: number; cache: unknown }>((resolve, reject) => {
    const u = new URL(site.url);
    const req = request({ host: u.hostname, port: u.port, path: '/api/csp-report', method: 'POST', headers: { 'content-type': 'application/csp-report', 'transfer-encoding': 'chunked' } },
      (res) => { res.resume(); resolve({ status: res.statusCode ?? 0, cache: res.headers['cache-control'] }); });
    req.on('error', reject);
    for (let i = 0; i < 40; i++) req.write('x'.repeat(1024));
    req.end();
  });
  assert.equal(r, { status: 204, cache: 'no-store' });
});

P('csp-report: GET → 405 "use POST" with Allow: POST', async () => {
  const r = await call(site.url, '/api/csp-report');
  assert.is(r.status, 405);
  assert.is(r.headers.allow, 'POST');
  assert.is(r.json().error.message, 'use POST');
});

P('csp-report: 60 per 10 minutes per client; over the limit still 204 but dropped', async () => {
  const fresh = await startTestSite((o) => { o.log = createLogger({ json: true, stream: sink }); });
  try {
    const before = logged.join('').split('page-777').length;
    for (let i = 0; i < 60; i++) assert.is((await call(fresh.url, '/api/csp-report', { body: report(i), headers: { 'content-type': 'application/csp-report' } })).status, 204);
    const over = await call(fresh.url, '/api/csp-report', { body: report(777), headers: { 'content-type': 'application/csp-report' } });
    assert.is(over.status, 204);
    assert.is(over.headers['retry-after'], undefined, 'a refusal looks like an acceptance');
    assert.is(logged.join('').split('page-777').length, before, 'the 61st report was not logged');
    fresh.clock.advance(10 * 60_000);
    await call(fresh.url, '/api/csp-report', { body: report(777), headers: { 'content-type': 'application/csp-report' } });
    assert.is(logged.join('').split('page-777').length, before + 1, 'logged again once the window moved');
  } finally {
    await fresh.cleanup();
  }
});

P('notify: GET names the service; POST stores the address lowercased once; no SMTP → noop', async () => {
  assert.equal((await call(site.url, '/api/notify')).json(), { ok: true, service: 'notify' });
  const first = await call(site.url, '/api/notify', { body: { email: '  Grace@Example.COM ' }, from: '127.0.2.1' });
  assert.equal([first.status, first.json()], [200, { ok: true, status: 'noop' }]);
  const again = await call(site.url, '/api/notify', { body: { email: 'grace@example.com' }, from: '127.0.2.1' });
  assert.equal(again.json(), { ok: true, status: 'already_subscribed' });
  const lines = readFileSync(join(site.dataDir, 'subscribers.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines, [{ email: 'grace@example.com', subscribed_at: '2026-01-01T00:00:00.000Z' }]);
});

P('notify: flat errors: invalid_email, bad_request; 429 rate_limited with Retry-After', async () => {
  const from = '127.0.2.2';
  const bad = await call(site.url, '/api/notify', { body: { email: 'not-an-address' }, from });
  assert.equal([bad.status, bad.json().ok, bad.json().error], [400, false, 'invalid_email']);
  assert.is((await call(site.url, '/api/notify', { body: {}, from })).json().error, 'invalid_email');
  assert.is((await call(site.url, '/api/notify', { body: '{"email":', headers: { 'content-type': 'application/json' }, from })).json().error, 'bad_request');
  assert.is((await call(site.url, '/api/notify', { body: [1, 2], from })).json().error, 'bad_request');
  assert.is((await call(site.url, '/api/notify', { body: 'email=a@b.co', headers: { 'content-type': 'text/plain' }, from })).json().error, 'bad_request');
  const sixth = await call(site.url, '/api/notify', { body: { email: 'valid@example.org' }, from });
  assert.equal([sixth.status, sixth.json().error], [429, 'rate_limited'], 'invalid requests count against the five');
  const rs = [];
  for (let i = 0; i < 6; i++) rs.push(await call(site.url, '/api/notify', { body: { email: `n${i}@example.org` }, from: '127.0.2.3' }));
  assert.equal(rs.map((r) => r.status), [200, 200, 200, 200, 200, 429], 'five requests per 10 minutes per address');
  assert.equal(rs[5]!.json(), { detail: 'Too many requests; retry in 600 s', ok: false, error: 'rate_limited' });
  assert.is(rs[5]!.headers['retry-after'], '600');
});

P('notify with SMTP: a welcome mail, then subscribed; a refusing server → 502 upstream and nothing stored', async () => {
  const smtp: FakeSmtp = await startFakeSmtp();
  const mailing = await startTestSite((o) => { o.smtp = { url: smtp.url, from: 'Site <hello@site.test>', timeoutMs: 3000 }; });
  try {
    const ok = await call(mailing.url, '/api/notify', { body: { email: 'Ada@Example.org' } });
    assert.equal(ok.json(), { ok: true, status: 'subscribed' });
    assert.equal([smtp.messages[0]!.from, smtp.messages[0]!.to], ['hello@site.test', ['ada@example.org']]);
    assert.match(smtp.messages[0]!.raw, /Subject: Welcome\./);
    smtp.refuse = 'mailbox unavailable';
    const refused = await call(mailing.url, '/api/notify', { body: { email: 'bob@example.org' } });
    assert.equal([refused.status, refused.json().ok, refused.json().error], [502, false, 'upstream']);
    const stored = readFileSync(join(mailing.dataDir, 'subscribers.jsonl'), 'utf8');
    assert.not.match(stored, /bob@/);
    smtp.refuse = null;
    assert.equal((await call(mailing.url, '/api/notify', { body: { email: 'bob@example.org' } })).json().status, 'subscribed', 'a retry succeeds');
  } finally {
    await mailing.cleanup();
    await smtp.close();
  }
});

P('notify: a data folder that refuses the write → a flat "unexpected" 5xx, never a hang', async () => {
  const broken = await startTestSite();
  try {
    mkdirSync(join(broken.dataDir, 'subscribers.jsonl'));
    const r = await call(broken.url, '/api/notify', { body: { email: 'disk@example.org' } });
    assert.ok(r.status >= 500, String(r.status));
    assert.equal([r.json().ok, r.json().error], [false, 'unexpected']);
  } finally {
    await broken.cleanup();
  }
});

P('indexnow: submits the sitemap URLs of the origin host to the endpoint, batch by batch', async () => {
  const fake: FakeIndexNow = await startFakeIndexNow();
  fake.sitemaps.set('/sitemap.xml', sitemapIndex([`${fake.origin}/s1.xml`, `${fake.origin}/s2.xml`]));
  fake.sitemaps.set('/s1.xml', urlset([`${fake.origin}/`, `${fake.origin}/blog/a?x=1&y=2`, 'https://elsewhere.example/x']));
  fake.sitemaps.set('/s2.xml', urlset([`${fake.origin}/blog/b`]));
  const host = new URL(fake.origin).host;
  const s = await startTestSite((o) => { o.indexnow = { token: 'trigger-token', production: true, key: 'k3y', origin: fake.origin, endpoints: [fake.endpoint] }; });
  try {
    const r = await call(s.url, '/api/indexnow', { method: 'POST', headers: { authorization: 'Bearer trigger-token' } });
    assert.is(r.status, 200, r.text);
    assert.equal(r.json(), { ok: true, data: { submitted: 3, results: [{ endpoint: fake.endpoint, status: 200, ok: true, urls: 3 }] } });
    assert.equal(fake.submissions[0]!.body, { host, key: 'k3y', urlList: [`${fake.origin}/`, `${fake.origin}/blog/a?x=1&y=2`, `${fake.origin}/blog/b`] });
    assert.match(String(fake.submissions[0]!.contentType), /application\/json/);
    fake.submitStatus = 403;
    const refused = await call(s.url, '/api/indexnow', { method: 'POST', headers: { authorization: 'Bearer trigger-token' } });
    assert.equal([refused.status, refused.json().error.code], [502, 'UPSTREAM_FAILED']);
    fake.sitemaps.delete('/sitemap.xml');
    fake.sitemapStatus = 500;
    const noMap = await call(s.url, '/api/indexnow', { method: 'POST', headers: { authorization: 'Bearer trigger-token' } });
    assert.equal([noMap.status, noMap.json().error.code], [502, 'UPSTREAM_FAILED']);
  } finally {
    await s.cleanup();
    await fake.close();
  }
});

P('indexnow: production without a token → 503; a wrong bearer → 401 with nothing submitted; GET → 405', async () => {
  const fake = await startFakeIndexNow();
  fake.sitemaps.set('/sitemap.xml', urlset([`${fake.origin}/`]));
  const base = { key: 'k3y', origin: fake.origin, endpoints: [fake.endpoint] };
  const prod = await startTestSite((o) => { o.indexnow = { ...base, production: true }; });
  const gated = await startTestSite((o) => { o.indexnow = { ...base, production: true, token: 'right' }; });
  const dev = await startTestSite((o) => { o.indexnow = { ...base, production: false }; });
  try {
    const r = await call(prod.url, '/api/indexnow', { method: 'POST' });
    assert.equal([r.status, r.json().error.code], [503, 'NOT_CONFIGURED']);
    for (const auth of [undefined, 'Bearer wrong', 'Bearer righ', 'Basic right']) {
      const d = await call(gated.url, '/api/indexnow', { method: 'POST', headers: auth ? { authorization: auth } : {} });
      assert.equal([d.status, d.json().error.code], [401, 'UNAUTHORIZED'], String(auth));
    }
    assert.is(fake.submissions.length, 0);
    assert.is((await call(dev.url, '/api/indexnow', { method: 'POST' })).status, 200, 'development without a token is open');
    const get = await call(gated.url, '/api/indexnow');
    assert.equal([get.status, get.headers.allow], [405, 'POST']);
  } finally {
    await Promise.all([prod.cleanup(), gated.cleanup(), dev.cleanup()]);
    await fake.close();
  }
});

P('unknown paths → 404 in the envelope', async () => {
  const r = await call(site.url, '/api/nothing-here');
  assert.equal([r.status, r.json().ok, r.json().error.code], [404, false, 'NOT_FOUND']);
});

P.run();
