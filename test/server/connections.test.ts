// Connection-level use: trusted proxies, loopback exemption, refused uploads, slow clients, and the per-address cap.
import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientAddress, cidrSet } from '../../src/server/allowlist.ts';
import { ConnectionCounts } from '../../src/server/connections.ts';
import { ADMIN, startServer } from './harness.ts';

const P = suite('client address and connection counts (pure)');

P('X-Forwarded-For counts only from a trusted proxy, read right to left', () => {
  const trusted = cidrSet(['127.0.0.1', '10.0.0.0/8'], 'server.trust_proxy');
  assert.is(clientAddress('::ffff:127.0.0.1', '203.0.113.9', null), '127.0.0.1', 'no trusted proxies: the peer');
  assert.is(clientAddress('192.0.2.1', '203.0.113.9', trusted), '192.0.2.1', 'an untrusted peer cannot name a client');
  assert.is(clientAddress('127.0.0.1', '203.0.113.9', trusted), '203.0.113.9');
  assert.is(clientAddress('127.0.0.1', '1.1.1.1, 203.0.113.9, 10.1.1.1', trusted), '203.0.113.9', 'client-written entries on the left are ignored');
  assert.is(clientAddress('127.0.0.1', 'garbage', trusted), '127.0.0.1');
  const c = new ConnectionCounts(2);
  assert.ok(c.open('a') && c.open('a'));
  assert.not.ok(c.open('a'));
  assert.ok(c.open('b'));
  c.close('a');
  assert.ok(c.open('a'));
});

const S = suite('connections over HTTP');

S('behind a trusted proxy the allowlist and rate limit see X-Forwarded-For, and the proxy itself is not exempt', async () => {
  const h = await startServer({ config: (c) => {
    c.server.allowed_ips = ['203.0.113.0/24'];
    c.server.trust_proxy = ['127.0.0.1'];
    c.server.rate_limit = { enabled: true, requests_per_s: 0.001, burst: 2 };
  } });
  const as = (xff?: string, path = '/') => h.fetch(path, { ...(path === '/' ? { token: ADMIN } : {}), headers: xff ? { 'x-forwarded-for': xff } : {} });
  try {
    assert.is((await as('203.0.113.9')).status, 200);
    const outside = await as('203.0.113.9, 198.51.100.1');
    assert.is(outside.status, 403);
    assert.equal(await outside.json(), { detail: 'IP 198.51.100.1 not in allowlist' });
    assert.is((await as()).status, 403, 'the proxy host itself (loopback) is not exempt while allowed_ips is set');
    // Anonymous calls are limited per client address: the one behind the proxy, not the proxy.
    assert.is((await as('203.0.113.9', '/health')).status, 200);
    assert.is((await as('203.0.113.9', '/health')).status, 200);
    assert.is((await as('203.0.113.9', '/health')).status, 429, 'the client behind the proxy has its own bucket');
    assert.is((await as('203.0.113.10', '/health')).status, 200, 'another client behind the same proxy is not throttled');
  } finally {
    await h.close();
  }
});

// Send a request head, then body bytes until the server closes; resolves what came back and how much was sent.
function upload(port: number, head: string, total: number): Promise<{ sent: number; response: string }> {
  return new Promise((resolve) => {
    const s: Socket = connect(port, '127.0.0.1');
    let sent = 0, response = '', done = false;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const finish = () => { if (!done) { done = true; s.destroy(); resolve({ sent, response }); } };
    s.on('data', (d) => { response += d.toString('latin1'); });
    s.on('error', finish);
    s.on('close', finish);
    const pump = () => {
      while (!done && sent < total) {
        sent += chunk.length;
        if (!s.write(chunk)) { s.once('drain', pump); return; }
      }
    };
    s.write(head, pump);
    setTimeout(finish, 15_000);
  });
}

S('an unauthenticated 64 MB upload gets its 401 and the connection is closed, not read to the end', async () => {
  const h = await startServer();
  try {
    const total = 64 * 1024 * 1024;
    const r = await upload(h.port, `GET / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n\r\n`, total);
    assert.match(r.response, /^HTTP\/1\.1 401/);
    assert.match(r.response.toLowerCase(), /connection: close/);
    assert.ok(r.sent < total / 2, `the server stopped reading early (accepted ${r.sent} of ${total} bytes)`);
  } finally {
    await h.close();
  }
});

S('a client that never finishes its headers is disconnected after server.headers_timeout_s', async () => {
  const h = await startServer({ config: (c) => { c.server.headers_timeout_s = 0.5; } });
  try {
    const closed = await new Promise<string>((resolve) => {
      const s = connect(h.port, '127.0.0.1', () => s.write('GET /health HTTP/1.1\r\nhost: x\r\n'));
      let got = '';
      s.on('data', (d) => { got += d; });
      s.on('close', () => resolve(got));
      s.on('error', () => undefined);
      setTimeout(() => { s.destroy(); resolve('still open'); }, 8_000);
    });
    assert.match(closed, /^HTTP\/1\.1 408/);
  } finally {
    await h.close();
  }
});

// Open a raw connection and wait until it is established (or refused with a response).
const open = (port: number) => new Promise<{ s: Socket; got: () => string }>((resolve) => {
  let got = '';
  const s = connect(port, '127.0.0.1', () => setTimeout(() => resolve({ s, got: () => got }), 50));
  s.on('data', (d) => { got += d; });
  s.on('error', () => undefined);
});

S('one address holds at most server.max_connections_per_ip connections; one more gets 503', async () => {
  const h = await startServer({ config: (c) => { c.server.max_connections_per_ip = 3; } });
  try {
    const held = [await open(h.port), await open(h.port), await open(h.port)];
    const extra = await open(h.port);
    await new Promise((r) => setTimeout(r, 100));
    assert.match(extra.got(), /^HTTP\/1\.1 503/);
    assert.match(extra.got(), /too many connections from 127\.0\.0\.1/);
    held[0]!.s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    assert.is((await h.fetch('/health')).status, 200, 'a freed slot is usable again');
    for (const c of held) c.s.destroy();
  } finally {
    await h.close();
  }
});

P.run();
S.run();
