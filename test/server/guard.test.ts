import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '../../src/auth/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { defineRoute } from '../../src/lib/route.ts';
import { createAllowlist } from '../../src/server/allowlist.ts';
import { takeToken } from '../../src/server/rate-limit.ts';
import { ADMIN, startServer } from './harness.ts';

const P = suite('token bucket and allowlist (pure)');

P('a full bucket lets burst requests through, then asks to wait for one token', () => {
  let b = undefined;
  for (let i = 0; i < 3; i++) {
    const s = takeToken(b, 0, 2, 3);
    assert.ok(s.allowed);
    b = s.bucket;
  }
  const denied = takeToken(b, 0, 2, 3);
  assert.not.ok(denied.allowed);
  assert.is(denied.retryAfterS, 0.5);
  assert.ok(takeToken(denied.bucket, 500, 2, 3).allowed, 'one token refilled after 1/rate seconds');
  assert.is(takeToken(undefined, 0, 2, 3).bucket.tokens, 2);
  assert.is(takeToken({ tokens: 0, at: 0 }, 1e9, 2, 3).bucket.tokens, 2, 'refill is capped at burst');
});

P('allowlist: CIDRs, bare addresses, IPv4-mapped IPv6, loopback switch, bad entries', () => {
  const a = createAllowlist(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32'], { allowLoopback: false });
  assert.ok(a.allows('10.1.2.3'));
  assert.ok(a.allows('::ffff:10.1.2.3'));
  assert.ok(a.allows('192.168.1.7'));
  assert.not.ok(a.allows('192.168.1.8'));
  assert.ok(a.allows('2001:db8::1'));
  assert.not.ok(a.allows('127.0.0.1'));
  assert.not.ok(createAllowlist(['10.0.0.0/8']).allows('::1'), 'loopback is not listed by default');
  assert.ok(createAllowlist(['10.0.0.0/8'], { allowLoopback: true }).allows('::1'));
  assert.ok(createAllowlist([]).allows('8.8.8.8'), 'empty list allows all');
  assert.throws(() => createAllowlist(['10.0.0.0/33']), /allowed_ips/);
  assert.throws(() => createAllowlist(['example.com']), /allowed_ips/);
});

const S = suite('rate limit and allowlist over HTTP');

S('over the rate → 429 with Retry-After; refills with time; keyed per token', async () => {
  const clock = manualClock();
  const h = await startServer({ clock, config: (c) => { c.server.rate_limit = { enabled: true, requests_per_s: 1, burst: 3, exempt_loopback: false }; } });
  try {
    const { token } = await createToken(h.layout, { role: 'viewer' }, clock);
    for (let i = 0; i < 3; i++) assert.is((await h.fetch('/', { token: ADMIN })).status, 200);
    const r = await h.fetch('/', { token: ADMIN });
    assert.is(r.status, 429);
    assert.is(r.headers.get('retry-after'), '1');
    assert.equal(await r.json(), { detail: 'Rate limit exceeded' });
    assert.is((await h.fetch('/', { token })).status, 200, 'another token has its own bucket');
    clock.advance(1000);
    assert.is((await h.fetch('/', { token: ADMIN })).status, 200, 'one token back after a second');
    assert.is((await h.fetch('/', { token: ADMIN })).status, 429);
  } finally {
    await h.close();
  }
});

S('failed authentications count against the client IP (429 before 401)', async () => {
  const h = await startServer({ clock: manualClock(), config: (c) => { c.server.rate_limit = { enabled: true, requests_per_s: 1, burst: 2, exempt_loopback: false }; } });
  try {
    assert.is((await h.fetch('/', { token: 'guess-1' })).status, 401);
    assert.is((await h.fetch('/', { token: 'guess-2' })).status, 401);
    assert.is((await h.fetch('/', { token: 'guess-3' })).status, 429);
    assert.is((await h.fetch('/health')).status, 429, 'public routes share the IP bucket');
  } finally {
    await h.close();
  }
});

S('loopback clients are exempt when exempt_loopback is set', async () => {
  const h = await startServer({ clock: manualClock(), config: (c) => { c.server.rate_limit = { enabled: true, requests_per_s: 1, burst: 1, exempt_loopback: true }; } });
  try {
    for (let i = 0; i < 5; i++) assert.is((await h.fetch('/', { token: ADMIN })).status, 200);
  } finally {
    await h.close();
  }
});

S('allowlist: a client outside it → 403 naming its IP; probes and docs stay reachable', async () => {
  const h = await startServer({ allowLoopback: false, config: (c) => { c.server.allowed_ips = ['10.0.0.0/8']; } });
  try {
    const r = await h.fetch('/', { token: ADMIN });
    assert.is(r.status, 403);
    assert.equal(await r.json(), { detail: 'IP 127.0.0.1 not in allowlist' });
    assert.is((await h.fetch('/no/such/route')).status, 403, 'unknown paths are not probed past the allowlist');
    for (const p of ['/health', '/health/ready', '/ready', '/alive', '/openapi.json', '/docs', '/.well-known/agent.json']) {
      assert.is((await h.fetch(p)).status, 200, p);
    }
  } finally {
    await h.close();
  }
});

S('signed (hmac) routes skip the bearer token but not the allowlist, the body limit or the rate limit', async () => {
  const signed = defineRoute({ method: 'POST', path: '/hook', operationId: 'hook', summary: 'signed', tags: ['t'], access: 'hmac', rawBody: true,
    responses: { 200: { description: 'ok' } }, handler: ({ raw }) => ({ bytes: raw?.length }) });
  const outside = await startServer({ routes: [signed], allowLoopback: false, config: (c) => { c.server.allowed_ips = ['10.0.0.0/8']; } });
  const open = await startServer({ routes: [signed], clock: manualClock(), config: (c) => {
    c.server.body_limit_bytes = 1024; c.server.rate_limit = { enabled: true, requests_per_s: 1, burst: 2, exempt_loopback: false };
  } });
  try {
    assert.is((await outside.fetch('/hook', { method: 'POST', body: 'x' })).status, 403);
    assert.equal(await (await open.fetch('/hook', { method: 'POST', body: 'x' })).json(), { bytes: 1 }, 'no bearer needed');
    assert.is((await open.fetch('/hook', { method: 'POST', body: 'x'.repeat(2048) })).status, 413);
    assert.is((await open.fetch('/hook', { method: 'POST', body: 'x' })).status, 429, 'counted per IP');
  } finally {
    await outside.close();
    await open.close();
  }
});

S('allowlist: listed addresses pass; loopback passes a non-empty list only when exempt_loopback says so', async () => {
  const listed = await startServer({ config: (c) => { c.server.allowed_ips = ['10.0.0.0/8', '127.0.0.1/32']; } });
  const byDefault = await startServer({ config: (c) => { c.server.allowed_ips = ['10.0.0.0/8']; } });
  const exempt = await startServer({ config: (c) => { c.server.allowed_ips = ['10.0.0.0/8']; c.server.exempt_loopback = true; } });
  try {
    assert.is((await listed.fetch('/', { token: ADMIN })).status, 200);
    // A reverse proxy on the same host would otherwise let the whole world in as 127.0.0.1.
    assert.is((await byDefault.fetch('/', { token: ADMIN })).status, 403);
    assert.is((await exempt.fetch('/', { token: ADMIN })).status, 200);
  } finally {
    await listed.close();
    await byDefault.close();
    await exempt.close();
  }
});

P.run();
S.run();
