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

/**
 * Build the allowlist from CIDRs (a bare address means one host). An empty list allows everyone;
 * loopback is allowed unless `allowLoopback` is false. An invalid entry throws (a config error).
 */
export function createAllowlist(cidrs: readonly string[], opts: { allowLoopback?: boolean } = {}): Allowlist {
  if (cidrs.length === 0) return { allows: () => true };
  const list = new BlockList();
  for (const entry of cidrs) {
    const [addr = '', bits] = entry.trim().split('/');
    const family = isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`server.allowed_ips: '${entry}' is not an IP address or CIDR`);
    }
    list.addSubnet(addr, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  const loopbackOk = opts.allowLoopback ?? true;
  return {
    allows(ip) {
      const n = normalizeIp(ip);
      if (loopbackOk && isLoopback(n)) return true;
      const family = isIP(n);
      return family !== 0 && list.check(n, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

// Liveness, readiness and the API description stay reachable for probes and humans from anywhere.
const EXEMPT = /^\/(health(\/.*)?|ready|alive|\.well-known\/agent\.json|docs(\/.*)?|openapi\.json)\/?$/;

/** True for paths the allowlist never blocks: /health*, /ready, /alive, agent card, /docs*, /openapi.json. */
export function allowlistExempt(path: string): boolean {
  return EXEMPT.test(path);
}
