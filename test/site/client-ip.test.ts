import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveClientIp, trustedProxies } from '../../src/server/client-ip.ts';

const C = suite('client address');
const none = trustedProxies([]);
const lb = trustedProxies(['10.0.0.0/8', '192.0.2.1']);

C('without --trust-proxy the socket address is the client, whatever the headers say', () => {
  assert.is(resolveClientIp('198.51.100.9', '1.2.3.4', none), '198.51.100.9');
  assert.is(resolveClientIp('::ffff:198.51.100.9', undefined, none), '198.51.100.9');
  assert.is(resolveClientIp('127.0.0.1', '203.0.113.5', none), '127.0.0.1', 'loopback is not trusted implicitly');
});

C('an untrusted peer sending X-Forwarded-For is still itself', () => {
  assert.is(resolveClientIp('198.51.100.9', '10.0.0.1, 1.2.3.4', lb), '198.51.100.9');
});

C('a trusted proxy: the hop it appended is the client; what the client wrote to its left is ignored', () => {
  assert.is(resolveClientIp('10.1.1.1', '203.0.113.5', lb), '203.0.113.5');
  assert.is(resolveClientIp('10.1.1.1', '6.6.6.6, 7.7.7.7, 203.0.113.5', lb), '203.0.113.5');
  assert.is(resolveClientIp('10.1.1.1', ['6.6.6.6', '203.0.113.5'], lb), '203.0.113.5', 'repeated headers join in order');
});

C('a chain of trusted proxies is walked to the first untrusted hop', () => {
  assert.is(resolveClientIp('192.0.2.1', '203.0.113.5, 10.2.2.2', lb), '203.0.113.5');
  assert.is(resolveClientIp('192.0.2.1', '10.3.3.3, 10.2.2.2', lb), '10.3.3.3', 'all trusted: the leftmost is the client');
});

C('entries with ports and IPv6 brackets; garbage stops at the proxy that passed it', () => {
  assert.is(resolveClientIp('10.1.1.1', '203.0.113.5:4711', lb), '203.0.113.5');
  assert.is(resolveClientIp('10.1.1.1', '[2001:db8::7]:443', lb), '2001:db8::7');
  assert.is(resolveClientIp('10.1.1.1', 'evil, not-an-ip', lb), '10.1.1.1');
  assert.is(resolveClientIp('10.1.1.1', '', lb), '10.1.1.1');
});

C('"loopback" names 127.0.0.0/8 and ::1; bad entries throw', () => {
  const t = trustedProxies(['loopback']);
  assert.ok(t.trusts('127.0.0.5') && t.trusts('::1') && t.trusts('::ffff:127.0.0.1'));
  assert.not.ok(t.trusts('10.0.0.1'));
  assert.throws(() => trustedProxies(['10.0.0.0/33']), /not an IP address or CIDR/);
  assert.throws(() => trustedProxies(['proxy.example']), /not an IP address or CIDR/);
});

C.run();
