// The two long-lived git processes a state commit goes through: `git fast-import` writes its objects (one
// fsynced pack per commit, at its checkpoint) and `git update-ref --stdin` moves the ref by compare-and-
// swap. Started on demand, so a commit costs neither a spawn (~10 ms of the server's event loop each) nor
// git's start and the parent's trees read again: a state commit every 250 ms of a busy board spent a
// third of a core in git before, most of it starting.
import { COMMITTED, importStream, parseImportOutput, release, type Content, type FolderTree } from './fast-import.ts';
import type { Git } from './git-cli.ts';
import { SessionEnded } from './line-session.ts';

/** One commit for `importCommit`: parent, message, time, and each path's content (asked for in order). */
export interface CommitInput {
  parent: string | null;
  message: string;
  timestampMs: number;
  paths: string[];
  content(path: string): Content | null;
  /** The blobs of folders whose tree is built outside fast-import (taken one at a time), then those folders' ids (null: deleted). */
  blobs?: Iterable<Uint8Array>;
  trees?: () => Promise<readonly FolderTree[]>;
}

export interface StateGit {
  /** Write one commit (its pack on disk); its id and whether its `.sdd` tree differs from the parent's. */
  importCommit(c: CommitInput): Promise<{ oid: string; changed: boolean }>;
  /** Move `ref` from `old` (null: absent) to `next`; the error's words when it was not at `old` or git refused. */
  moveRef(ref: string, next: string, old: string | null): Promise<string | null>;
  /** End both processes; the next commit starts new ones (after a repack, fast-import must see the new packs). */
  recycle(): Promise<void>;
}

// A scratch ref fast-import commits to and deletes again before its checkpoint (it never reaches disk):
// the commit's id comes back through `get-mark`, and the real ref moves by CAS afterwards.
const SCRATCH_REF = 'refs/sdd/import-scratch';
const ZERO = '0'.repeat(40);
// unpackLimit=0: always a pack (the default unpacks small imports into loose objects); pack and index are
// fsynced before they are renamed into place. zlib level 1: the day's audit segment goes in whole, and
// level 1 costs half the CPU of the default for a pack ~8% larger (a 12.7 MB segment: 0.15 s against 0.27 s).
const IMPORT = ['-c', 'fastimport.unpackLimit=0', '-c', 'core.fsync=pack,pack-metadata', '-c', 'pack.compression=1', 'fast-import', '--quiet'];

/** The state commit's git processes in `git`'s repository. */
export function createStateGit(git: Git): StateGit {
  // `feature done`: a stream cut short (the server killed mid-commit) is an error, and git writes nothing of it.
  const importer = git.session(IMPORT, { preamble: 'feature done\n' });
  const refs = git.session(['update-ref', '-m', 'svc: state commit', '--stdin']);
  return {
    async importCommit(c) {
      // A path read but never streamed (the import failed first) must not keep its descriptor.
      const opened: Content[] = [];
      const content = (path: string) => { const got = c.content(path); if (got?.kind === 'file') opened.push(got); return got; };
      try {
        const lines = await git.exclusive(() => importer.ask(importStream({ ref: SCRATCH_REF, ...c, content }), c.parent ? 4 : 3));
        if (lines.at(-1) !== COMMITTED) throw new Error(`git fast-import did not finish the commit: ${lines.join(' | ').slice(0, 300)}`);
        return parseImportOutput(lines.slice(0, -1).join('\n'), c.parent !== null);
      } finally {
        for (const o of opened) release(o);
      }
    },
    async moveRef(ref, next, old) {
      try {
        const lines = await git.exclusive(() => refs.ask(`start\nupdate ${ref} ${next} ${old ?? ZERO}\nprepare\ncommit\n`, 3));
        return lines.join('\n') === 'start: ok\nprepare: ok\ncommit: ok' ? null : lines.join('; ');
      } catch (err) {
        // update-ref ends on a refused update (the ref moved, a lock held): its words, and a new process next time.
        if (err instanceof SessionEnded) return err.stderr.trim() || err.message;
        throw err;
      }
    },
    async recycle() {
      await Promise.all([importer.close('done\n'), refs.close()]);
    },
  };
}
