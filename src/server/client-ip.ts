import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { normalizeIp } from './allowlist.ts';

/** Which peer addresses are proxies whose X-Forwarded-For is believed. */
export interface TrustedProxies {
  trusts(ip: string): boolean;
}

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/**
 * Build the trusted set from addresses and CIDRs (`loopback` names 127.0.0.0/8 and ::1). An empty
 * list trusts nobody: the client is then always the socket address. An invalid entry throws.
 */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  const all = entries.flatMap((e) => (e.trim() === 'loopback' ? LOOPBACK : [e.trim()])).filter(Boolean);
  for (const entry of all) {
    const [addr = '', bits] = entry.split('/');
    const family = isIP(addr);
    const max = family === 6 ? 128 : 32;
    const prefix = bits === undefined ? max : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`trusted proxy '${entry}' is not an IP address or CIDR`);
    list.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    trusts(ip) {
      if (all.length === 0) return false;
      const n = normalizeIp(ip);
      const family = isIP(n);
      return family !== 0 && list.check(n, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

// One X-Forwarded-For entry as an address: ports and IPv6 brackets removed; '' when not an address.
function hopAddress(entry: string): string {
  let e = entry.trim();
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracket) e = bracket[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(e)) e = e.slice(0, e.lastIndexOf(':'));
  return isIP(e) ? normalizeIp(e) : '';
}

/**
 * The client address of a request: walk X-Forwarded-For from the right (the hop the last proxy
 * appended) only while the current peer is a trusted proxy; the first untrusted hop is the client.
 * Entries a client wrote itself sit left of what a trusted proxy appended and are never reached; an
 * entry that is not an address stops the walk at the proxy that passed it.
 */
export function resolveClientIp(socketIp: string, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  let current = normalizeIp(socketIp);
  if (!trusted.trusts(current) || forwardedFor === undefined) return current;
  const hops = [forwardedFor].flat().join(',').split(',').reverse();
  for (const hop of hops) {
    const addr = hopAddress(hop);
    if (!addr) return current;
    current = addr;
    if (!trusted.trusts(current)) return current;
  }
  return current;
}

/** `resolveClientIp` for a Node request (socket address, X-Forwarded-For header). */
export function requestClientIp(req: IncomingMessage, trusted: TrustedProxies): string {
  return resolveClientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], trusted);
}
