// syncfs(2) of the filesystem holding a folder. Node has no binding for it, and spawning `sync -f` from
// the server forks a process of a few hundred MiB: ~30 ms of its event loop per checkpoint here (the
// page tables are copied). One small `sh` started once runs `sync -f` per request instead.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** syncfs(2) of the filesystem holding `dir`, in a `sync -f` of its own (a one-off: replay, tools). */
export const syncfs = async (dir: string): Promise<void> => { await run('sync', ['-f', dir]); };

/** A syncfs of one folder's filesystem through a long-lived helper; `close` ends the helper. */
export interface SyncFs {
  sync(): Promise<void>;
  close(): void;
}

// Reads a line per request, answers 0 (synced) or 1 (sync failed) per line; ends when its stdin closes.
const LOOP = 'while read -r _; do if sync -f "$1"; then echo 0; else echo 1; fi; done';

class HelperGone extends Error {
  constructor(dir: string) { super(`the syncfs helper of ${dir} ended`); }
}

/** A helper for `dir`, started on the first sync and again after it died (requests in flight then fail). */
export function createSyncFs(dir: string): SyncFs {
  let child: ChildProcess | undefined;
  let waiting: { resolve(): void; reject(err: Error): void }[] = [];
  let out = '';
  const failAll = (err: Error) => { for (const w of waiting.splice(0)) w.reject(err); };
  const start = (): ChildProcess => {
    const c = spawn('sh', ['-c', LOOP, 'svc-syncfs', dir], { stdio: ['pipe', 'pipe', 'ignore'] });
    c.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const ok = out.slice(0, nl) === '0';
        out = out.slice(nl + 1);
        const w = waiting.shift();
        if (ok) w?.resolve();
        else w?.reject(new Error(`sync -f ${dir} failed`));
      }
      if (!waiting.length) hold(c, false);
    });
    const gone = (err?: Error) => {
      if (child !== c) return;
      child = undefined;
      out = '';
      failAll(err ?? new HelperGone(dir));
    };
    c.on('error', gone);
    c.on('exit', () => gone());
    c.stdin!.on('error', () => undefined); // a helper that died: its exit answers the waiting
    return c;
  };
  // The helper keeps the process alive only while a sync is waiting for its answer.
  const hold = (c: ChildProcess, on: boolean) => {
    const out = c.stdout as unknown as { ref(): void; unref(): void };
    if (on) { c.ref(); out.ref(); } else { c.unref(); out.unref(); }
  };
  const once = () => new Promise<void>((resolve, reject) => {
    child ??= start();
    waiting.push({ resolve, reject });
    hold(child, true);
    child.stdin!.write('\n');
  });
  return {
    // A helper that died since the last sync (killed, say) is noticed by the write: one more try, on a new one.
    sync: () => once().catch((err: unknown) => { if (err instanceof HelperGone) return once(); throw err; }),
    close() {
      const c = child;
      child = undefined;
      failAll(new Error('syncfs helper closed'));
      c?.stdin!.end();
    },
  };
}
