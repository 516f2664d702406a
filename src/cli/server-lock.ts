import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../lib/log.ts';
import { CliError } from './args.ts';
import { readJsonQuiet } from './client.ts';

interface ServerInfo {
  pid: number;
  port?: number;
  host?: string;
}

/** Take `.sdd/runtime/server.lock`; a live holder makes this a CliError naming its pid and port. */
export async function takeServerLock(lockPath: string, infoPath: string, log: Logger): Promise<() => Promise<void>> {
  mkdirSync(dirname(lockPath), { recursive: true });
  const opts = {
    realpath: false,
    lockfilePath: lockPath,
    stale: 10_000,
    onCompromised: (err: Error) => log.error(`server lock compromised: ${err.message}`),
  };
  try {
    return await lockfile.lock(dirname(lockPath), opts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const info = readJsonQuiet<ServerInfo>(infoPath);
    // A SIGKILLed holder leaves the lock behind for `stale` ms; its dead pid lets us take over at once.
    if (info && !alive(info.pid) && infoIsCurrent(infoPath, lockPath)) {
      rmSync(lockPath, { recursive: true, force: true });
      return lockfile.lock(dirname(lockPath), opts);
    }
    const where = info ? `pid ${info.pid}${info.port ? `, port ${info.port}` : ''}` : 'another process';
    throw new CliError(`svc is already running on this tree (${where}); lock ${lockPath}`);
  }
}

/** True while a live process holds the server lock of a tree (its server.json names a running pid). */
export function serverAlive(lockPath: string, infoPath: string): boolean {
  if (!existsSync(lockPath)) return false;
  const info = readJsonQuiet<ServerInfo>(infoPath);
  return info !== undefined && Number.isInteger(info.pid) && alive(info.pid) && infoIsCurrent(infoPath, lockPath);
}

// server.json written after the lock dir was created belongs to the lock's holder, not to an older run.
function infoIsCurrent(infoPath: string, lockPath: string): boolean {
  try {
    const born = statSync(lockPath).birthtimeMs;
    return born === 0 || statSync(infoPath).mtimeMs + 1 >= born;
  } catch {
    return true;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
