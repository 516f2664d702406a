import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  batchesFor, chatUrl, checkTrigger, citationsFor, citedNumbers, ModelError, normalizeEmail, parseCspReport, parseSummaryAnswer, sitemapLocs, SseLines,
  type Hit,
} from '../../src/site/index.ts';

const P = suite('site parsing');

P('SSE lines: events across chunk boundaries, CRLF split in two, multi-line data, comments', () => {
  const r = new SseLines();
  assert.equal(r.push('data: {"a"'), []);
  assert.equal(r.push(':1}\r'), []);
  assert.equal(r.push('\n\r\n: ping\n\ndata: x\ndata: y\n\ndata:[DONE]'), ['{"a":1}', 'x\ny']);
  assert.equal(r.end(), ['[DONE]'], 'a last event without the blank line still counts');
});

P('chat URL: a base URL gets /chat/completions, a full URL is kept', () => {
  assert.is(chatUrl('http://h/v1'), 'http://h/v1/chat/completions');
  assert.is(chatUrl('http://h/v1/'), 'http://h/v1/chat/completions');
  assert.is(chatUrl('http://h/openai/chat/completions'), 'http://h/openai/chat/completions');
});

P('summary answer: JSON (fences tolerated) of the right shape, else an upstream failure', () => {
  const ok = parseSummaryAnswer('```json\n{"format":"bullets","items":["a","b"],"whyItMatters":"c"}\n```');
  assert.equal(ok, { format: 'bullets', items: ['a', 'b'], whyItMatters: 'c' });
  for (const bad of ['no json here', '{"format":"prose","items":["a"],"whyItMatters":"c"}', '{"format":"bullets","items":[],"whyItMatters":"c"}',
    '{"format":"bullets","items":["1","2","3","4","5"],"whyItMatters":"c"}']) {
    try { parseSummaryAnswer(bad); assert.unreachable(bad); } catch (e) { assert.instance(e, ModelError); assert.is((e as ModelError).kind, 'upstream'); }
  }
});

P('citations: distinct [n] in order, within range; lists like [1, 3] count; none cited → every hit', () => {
  assert.equal(citedNumbers('See [2] and [1, 3]; again [2]. Not [9] or [0].', 3), [2, 1, 3]);
  const hits = [1, 2, 3].map((n) => ({ n, slug: `s${n}`, title: `T${n}`, heading: '', url: `/blog/s${n}`, excerpt: '', score: 1 })) as Hit[];
  assert.equal(citationsFor('Only [3].', hits).map((c) => c.slug), ['s3']);
  assert.equal(citationsFor('No marks.', hits).length, 3);
});

P('email: trimmed, lowercased, basic x@y.z, at most 254 characters', () => {
  assert.is(normalizeEmail('  Ada@Example.ORG '), 'ada@example.org');
  for (const bad of ['', 'ada', 'ada@example', '@example.org', 'a b@example.org', `${'a'.repeat(250)}@x.org`]) assert.is(normalizeEmail(bad), null, bad);
});

P('CSP reports: the legacy and the Reporting API formats, fields cut at 300 characters', () => {
  const legacy = parseCspReport(Buffer.from(JSON.stringify({ 'csp-report': {
    'document-uri': 'https://site/a', 'violated-directive': 'script-src', 'blocked-uri': 'https://evil/x.js', 'line-number': 7, 'script-sample': 'x'.repeat(500), disposition: 'enforce',
  } })));
  assert.equal(legacy.length, 1);
  assert.is(legacy[0]!.directive, 'script-src');
  assert.is(legacy[0]!.line, 7);
  assert.is(legacy[0]!.sample.length, 300);
  const modern = parseCspReport(Buffer.from(JSON.stringify([
    { type: 'csp-violation', body: { documentURL: 'https://site/b', effectiveDirective: 'img-src', blockedURL: 'data', disposition: 'report', sourceFile: 'f.js', lineNumber: 3 } },
    { type: 'deprecation', body: {} },
  ])));
  assert.equal(modern.map((v) => [v.directive, v.document, v.line]), [['img-src', 'https://site/b', 3]]);
  assert.equal(parseCspReport(Buffer.from('{not json')), []);
  assert.equal(parseCspReport(Buffer.from('"a string"')), []);
});

P('sitemaps: <loc> entries unescaped, sitemap indexes recognised, batches of one host', () => {
  assert.equal(sitemapLocs('<urlset><url><loc> https://s.dev/a?x=1&amp;y=2 </loc></url><url><loc><![CDATA[https://s.dev/b]]></loc></url></urlset>'),
    { urls: ['https://s.dev/a?x=1&y=2', 'https://s.dev/b'], sitemaps: [] });
  assert.equal(sitemapLocs('<sitemapindex><sitemap><loc>https://s.dev/s1.xml</loc></sitemap></sitemapindex>'), { urls: [], sitemaps: ['https://s.dev/s1.xml'] });
  const urls = ['https://s.dev/1', 'https://other.dev/2', 'https://s.dev/3', 'https://s.dev/1', 'not a url', 'https://s.dev/4'];
  assert.equal(batchesFor(urls, 's.dev', 2), [['https://s.dev/1', 'https://s.dev/3'], ['https://s.dev/4']]);
});

P('IndexNow trigger: 503 in production without a token, open in development, 401 for a wrong bearer', () => {
  assert.is(checkTrigger(undefined, { production: true })?.status, 503);
  assert.is(checkTrigger(undefined, { production: false }), null);
  const s = { token: 'tok-123', production: true };
  assert.is(checkTrigger('Bearer tok-123', s), null);
  assert.is(checkTrigger('bearer   tok-123', s), null);
  for (const bad of [undefined, '', 'Bearer', 'Bearer tok-1234', 'Bearer tok-12', 'Basic tok-123', 'tok-123']) {
    const e = checkTrigger(bad, s);
    assert.is(e?.status, 401, String(bad));
    assert.is(e?.headers['www-authenticate'], 'Bearer');
  }
});

P.run();
