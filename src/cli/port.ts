import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { CliError } from './args.ts';

/**
 * Fail with `port N is in use (by pid M); use --port` unless `host:port` can be bound now. Run before `svc up`
 * touches anything, so a busy port leaves no `.sdd`, token or state commit behind.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const err = await new Promise<NodeJS.ErrnoException | null>((done) => {
    const probe = createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => done(e));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => done(null)));
  });
  if (!err) return;
  if (err.code === 'EADDRINUSE') {
    const pid = portOwner(port);
    throw new CliError(`port ${port} is in use${pid ? ` (by pid ${pid})` : ''}; use --port (0 picks a free one)`);
  }
  if (err.code === 'EACCES') throw new CliError(`port ${port} needs privileges on this machine; use --port with a number above 1023`);
  if (err.code === 'EADDRNOTAVAIL') throw new CliError(`cannot listen on ${host}: no such address on this machine; use --host`);
  throw new CliError(`cannot listen on ${host}:${port}: ${err.message}`);
}

/** The pid of the process listening on TCP `port`, when /proc tells (Linux, same user); else null. */
export function portOwner(port: number): number | null {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; field 9 is the socket inode.
      if (f[3] === '0A' && parseInt(f[1]?.split(':')[1] ?? '', 16) === port && f[9]) inodes.add(f[9]);
    }
  }
  if (inodes.size === 0) return null;
  for (const pid of safeList('/proc').filter((d) => /^\d+$/.test(d))) {
    for (const fd of safeList(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return Number(pid);
      } catch { /* gone or not ours */ }
    }
  }
  return null;
}

function safeList(dir: string): string[] {
  try { return readdirSync(dir); } catch { return []; }
}
