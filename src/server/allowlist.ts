import { BlockList, isIP } from 'node:net';

/** Decides whether a client address may use the server at all (DECISIONS.md Access: allowlist). */
export interface Allowlist {
  allows(ip: string): boolean;
}

/** `::ffff:127.0.0.1` (an IPv4 client on a dual-stack socket) is the IPv4 address it wraps. */
export function normalizeIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/** True for 127.0.0.0/8 and ::1. */
export function isLoopback(ip: string): boolean {
  const n = normalizeIp(ip);
  return n === '::1' || n.startsWith('127.');
}

/** A set of CIDRs (a bare address means one host); an invalid entry throws naming `key` (a config error). */
export function cidrSet(cidrs: readonly string[], key: string): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [addr = '', bits] = entry.trim().split('/');
    const family = isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`${key}: '${entry}' is not an IP address or CIDR`);
    }
    list.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return (ip) => {
    const n = normalizeIp(ip);
    const family = isIP(n);
    return family !== 0 && list.check(n, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * Build the allowlist from `server.allowed_ips`. An empty list allows everyone; loopback passes a
 * non-empty list only with `allowLoopback` (server.exempt_loopback). An invalid entry throws.
 */
export function createAllowlist(cidrs: readonly string[], opts: { allowLoopback?: boolean } = {}): Allowlist {
  if (cidrs.length === 0) return { allows: () => true };
  const listed = cidrSet(cidrs, 'server.allowed_ips');
  const loopbackOk = opts.allowLoopback ?? false;
  return { allows: (ip) => (loopbackOk && isLoopback(ip)) || listed(ip) };
}

/** `server.exempt_loopback`, defaulting to true only while `allowed_ips` is empty (a local proxy would make both checks useless). */
export function loopbackExempt(server: { exempt_loopback?: boolean | undefined; allowed_ips: readonly string[] }): boolean {
  return server.exempt_loopback ?? server.allowed_ips.length === 0;
}

/**
 * The client's address: the TCP peer, or, when the peer is a trusted proxy (`server.trust_proxy`), the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy (entries left of it are client-made).
 */
export function clientAddress(peer: string, forwarded: string | string[] | undefined, trusted: ((ip: string) => boolean) | null): string {
  const ip = normalizeIp(peer);
  if (!trusted || !trusted(ip) || forwarded === undefined) return ip;
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',').map((h) => normalizeIp(h.trim())).filter((h) => isIP(h) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i]!)) return hops[i]!;
  return hops[0] ?? ip;
}

// Liveness, readiness and the API description stay reachable for probes and humans from anywhere.
const EXEMPT = /^\/(health(\/.*)?|ready|alive|\.well-known\/agent\.json|docs(\/.*)?|openapi\.json)\/?$/;

/** True for paths the allowlist never blocks: /health*, /ready, /alive, agent card, /docs*, /openapi.json. */
export function allowlistExempt(path: string): boolean {
  return EXEMPT.test(path);
}
