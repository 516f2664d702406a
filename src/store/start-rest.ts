// The part of the start's comparison left for after the start (RecoverOptions.later): a large board's EU AI Act
// folder after a clean stop, a third of the start's CPU at 100k tasks (bench/README.md "start"). Only the server
// writes there, and only new records (a task's at its creation; the backfill's, which waits for this): the files
// restored here are written by nobody else meanwhile, and the changed ones are marked for the group commit, which
// reads each as it is then.
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { STATE_REF, type SddLayout } from './layout.ts';
import { scanOnThread } from './start-scan.ts';

/** Compare `folder` (relative to `.sdd`) with the ref at `head` on a thread; true once done, false when it failed (said). */
async function compareRest(layout: SddLayout, head: string | null, folder: string, touch: (abs: string, note?: string) => void, log: Logger): Promise<boolean> {
  try {
    const { changed, missing, restored } = await scanOnThread(layout, head, { restore: true, under: folder }).scan;
    let note: string | undefined = `${folder}: ${changed.size} file(s) changed while the server was down`;
    for (const rel of changed.keys()) { touch(join(layout.sdd, rel), note); note = undefined; }
    if (changed.size || restored.paths.length) log.info(`${folder}/ compared after the start: ${changed.size} changed file(s) to commit, ${restored.paths.length} restored from ${STATE_REF}`);
    if (missing.length) log.warn(`${missing.length} path(s) of ${STATE_REF} in ${folder}/ are missing on disk; kept in the ref (a restart restores them)`);
    return true;
  } catch (err) {
    log.error(`${folder}/ was not compared with ${STATE_REF}; the next start compares it`, err);
    return false;
  }
}

/** What a committer left for after the start: `leave` it at the recover, `begin` it once the server serves (finishStart). */
export interface RestOfStart {
  /** Resolves once every file has been compared (at `leave` when nothing is left). */
  readonly compared: Promise<void>;
  /** Every file has been compared: a clean stop may vouch for the tree. */
  readonly whole: boolean;
  leave(head: string | null, folder: string | null): void;
  begin(touch: (abs: string, note?: string) => void): void;
  /** The comparison begun, until it ends (awaited by a stop). */
  settled(): Promise<void>;
}

export function restOfStart(layout: SddLayout, log: Logger): RestOfStart {
  let rest: { head: string | null; folder: string } | null = null;
  let comparing: Promise<void> | null = null;
  let whole = false;
  let comparedNow!: () => void;
  const compared = new Promise<void>((resolve) => { comparedNow = resolve; });
  return {
    compared,
    get whole() { return whole; },
    leave(head, folder) {
      rest = folder === null ? null : { head, folder };
      whole = !rest;
      if (whole) comparedNow();
    },
    begin(touch) {
      if (!rest || comparing) return;
      comparing = compareRest(layout, rest.head, rest.folder, touch, log).then((done) => { whole = done; comparedNow(); });
    },
    settled: async () => { await comparing; },
  };
}
