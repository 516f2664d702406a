// syncfs(2) of the filesystem holding a folder. Node has no binding for it, and spawning `sync -f` from
// the server forks a process of a few hundred MiB: ~30 ms of its event loop per checkpoint here (the
// page tables are copied). One small `sh` started once runs `sync -f` per request instead.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { lineSession, SessionEnded } from './line-session.ts';

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

/** A helper for `dir`, started on the first sync and again after it died. */
export function createSyncFs(dir: string): SyncFs {
  const helper = lineSession('sh', ['-c', LOOP, 'svc-syncfs', dir]);
  const once = async () => {
    const [answer] = await helper.ask('\n', 1);
    if (answer !== '0') throw new Error(`sync -f ${dir} failed`);
  };
  return {
    // A helper that died since the last sync (killed, say) fails this one: one more try, on a new one.
    sync: () => once().catch((err: unknown) => { if (err instanceof SessionEnded) return once(); throw err; }),
    close() { void helper.close(); },
  };
}
