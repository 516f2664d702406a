import type { Server } from 'node:http';
import { normalizeIp } from './allowlist.ts';

/** Open connections per client address (pure bookkeeping): `open` says whether one more may be accepted. */
export class ConnectionCounts {
  private counts = new Map<string, number>();
  constructor(private readonly max: number) {}
  /** Count a new connection from `ip`; false (not counted) when it already holds `max`. */
  open(ip: string): boolean {
    const n = this.counts.get(ip) ?? 0;
    if (n >= this.max) return false;
    this.counts.set(ip, n + 1);
    return true;
  }
  close(ip: string): void {
    const n = (this.counts.get(ip) ?? 1) - 1;
    if (n <= 0) this.counts.delete(ip);
    else this.counts.set(ip, n);
  }
  of(ip: string): number { return this.counts.get(ip) ?? 0; }
}

/**
 * Cap concurrent connections per client address (`server.max_connections_per_ip`): one more gets a
 * 503 and is closed, so one client cannot hold every file descriptor. Trusted proxies are not capped.
 */
export function limitConnections(server: Server, opts: { maxPerIp: number; exempt: ((ip: string) => boolean) | null }): ConnectionCounts {
  const counts = new ConnectionCounts(opts.maxPerIp);
  server.on('connection', (socket) => {
    const ip = normalizeIp(socket.remoteAddress ?? '');
    if (opts.exempt?.(ip)) return;
    if (!counts.open(ip)) {
      const body = JSON.stringify({ detail: `too many connections from ${ip} (server.max_connections_per_ip is ${opts.maxPerIp})` });
      socket.on('error', () => undefined);
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      socket.destroySoon?.();
      return;
    }
    socket.once('close', () => counts.close(ip));
  });
  return counts;
}
