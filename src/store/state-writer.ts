import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Git } from './git-cli.ts';
import { blobId, commonGitDir, createObjectStore, type ObjectStore } from './git-objects.ts';
import { STATE_REF, type SddLayout } from './layout.ts';
import { commitMessage } from './message.ts';
import { MemTree } from './tree.ts';
import type { CommitResult, Note } from './types.ts';

const ZERO = '0'.repeat(40);

/**
 * One commit's worth of paths (relative to `.sdd`); `known` gives blob ids already written, `texts` the
 * content of paths whose writer said it (null = deleted in both); other paths are read from their files.
 */
export interface Batch {
  paths: string[];
  notes: Note[];
  known?: ReadonlyMap<string, string | null>;
  texts?: ReadonlyMap<string, string | null>;
  message?: string;
}

/** Writes batches as commits on refs/sdd/state; callers serialise calls. */
export interface StateWriter {
  commit(batch: Batch): Promise<CommitResult | null>;
  /** The ref's value, read from git now. */
  readRef(): Promise<string | null>;
  /** Re-base the in-memory tree on the ref's current commit and return that commit. */
  reload(): Promise<string | null>;
  /** Write files (relative to `.sdd`) as blobs with one `git hash-object` process; rel → oid. */
  writeBlobs(rels: string[]): Promise<Map<string, string>>;
  resetCache(): void;
}

export interface StateWriterOptions {
  layout: SddLayout;
  git: Git;
  log: Logger;
  clock: Clock;
  /** Attempts after a lost compare-and-swap of the ref (default 5). */
  maxCasRetries?: number;
}

/** One path of a commit: new bytes, a blob that exists already, or a delete. */
type Change = { path: string; data: Uint8Array } | { path: string; oid: string } | { path: string; deleted: true };

/**
 * A StateWriter; it loads lazily, so creating one does no IO. The in-memory tree (blob ids only) says
 * which paths really changed; `git fast-import` writes the blobs, trees and commit as one packfile
 * (fsynced), a few files per commit however many paths changed, where loose objects cost several
 * file creations and renames per path; then the ref moves with `update-ref new old`.
 */
export function createStateWriter(opts: StateWriterOptions): StateWriter {
  const { layout, git, log, clock } = opts;
  let objects: ObjectStore | null = null;
  let head: string | null = null;
  let tree: MemTree | null = null;

  const readRef = async () => {
    const r = await git.run(['rev-parse', '--verify', '-q', `${STATE_REF}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : null;
  };
  // Base the in-memory tree on the ref's current commit (at start, and after losing a CAS).
  const reload = async (): Promise<MemTree> => {
    objects ??= createObjectStore(await commonGitDir(git));
    head = await readRef();
    tree = new MemTree(objects, head ? await objects.commitTree(head) : null);
    return tree;
  };

  // Apply every path of the batch to the tree; the changes that differ from it. Known ids, known texts, else the file's bytes (missing = deleted).
  const apply = async (t: MemTree, batch: Batch): Promise<Change[]> => {
    const out: Change[] = [];
    for (const rel of batch.paths) {
      const path = `.sdd/${rel}`;
      const known = batch.known?.get(rel);
      const text = batch.texts?.get(rel);
      let data: Uint8Array | null | undefined;
      if (known === undefined && text !== undefined) data = text === null ? null : Buffer.from(text, 'utf8');
      else if (known === undefined) {
        data = await readFile(join(layout.sdd, rel)).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return null;
          if (err.code === 'EISDIR') return undefined;
          throw err;
        });
        if (data === undefined) continue;
      }
      if (known === null || (known === undefined && data === null)) {
        if (await t.remove(path)) out.push({ path, deleted: true });
      } else if (known !== undefined) {
        if (await t.set(path, known)) out.push({ path, oid: known });
      } else if (await t.set(path, blobId(data!))) out.push({ path, data: data! });
    }
    return out;
  };

  const commit = async (batch: Batch): Promise<CommitResult | null> => {
    const max = opts.maxCasRetries ?? 5;
    let t = tree ?? (await reload());
    for (let attempt = 0; ; attempt++) {
      const changes = await apply(t, batch);
      if (!changes.length) return null;
      const message = batch.message ?? commitMessage(batch.notes, batch.paths.length);
      const oid = await importCommit(git, { parent: head, message, timestampMs: clock.now(), changes });
      const moved = await git.mutate(['update-ref', '-m', message, STATE_REF, oid, head ?? ZERO], { allowFail: true });
      if (moved.code === 0) {
        head = oid;
        return { oid, message, paths: batch.paths.length };
      }
      if (attempt >= max) throw new Error(`${STATE_REF} update failed after ${attempt + 1} attempts: ${moved.stderr.trim()}`);
      log.warn(`${STATE_REF} moved under the committer; committing again on top`, { expected: head, attempt: attempt + 1 });
      t = await reload();
    }
  };

  const writeBlobs = async (rels: string[]) => {
    const out = new Map<string, string>();
    if (!rels.length) return out;
    const input = rels.map((r) => join(layout.sdd, r)).join('\n') + '\n';
    const { stdout } = await git.mutate(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input });
    stdout.trim().split('\n').forEach((oid, i) => out.set(rels[i]!, oid));
    return out;
  };

  return {
    commit,
    readRef,
    async reload() {
      await reload();
      return head;
    },
    writeBlobs,
    resetCache: () => objects?.resetCache(),
  };
}

// A scratch ref fast-import commits to and deletes again in the same run (it never reaches disk):
// the commit's id comes back through `get-mark`, and the real ref moves by CAS afterwards.
const SCRATCH_REF = 'refs/sdd/import-scratch';

/** Write one commit (blobs, trees, commit: one fsynced packfile) with `git fast-import`; its id. */
async function importCommit(git: Git, c: { parent: string | null; message: string; timestampMs: number; changes: Change[] }): Promise<string> {
  const parts: (string | Uint8Array)[] = [];
  const data = (bytes: string | Uint8Array) => {
    parts.push(`data ${typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength}\n`, bytes, '\n');
  };
  parts.push(`feature done\ncommit ${SCRATCH_REF}\nmark :1\ncommitter svc <svc@localhost> ${Math.floor(c.timestampMs / 1000)} +0000\n`);
  data(c.message + '\n');
  if (c.parent) parts.push(`from ${c.parent}\n`);
  for (const ch of c.changes) {
    const path = quotePath(ch.path);
    if ('deleted' in ch) parts.push(`D ${path}\n`);
    else if ('oid' in ch) parts.push(`M 100644 ${ch.oid} ${path}\n`);
    else {
      parts.push(`M 100644 inline ${path}\n`);
      data(ch.data);
    }
  }
  parts.push(`\nget-mark :1\nreset ${SCRATCH_REF}\nfrom ${ZERO}\n\ndone\n`);
  const input = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
  // unpackLimit=0: always one pack (the default unpacks small imports into loose objects); pack and
  // index are fsynced before fast-import renames them into place.
  const r = await git.mutate(['-c', 'fastimport.unpackLimit=0', '-c', 'core.fsync=pack,pack-metadata', 'fast-import', '--quiet', '--done'], { input });
  const oid = r.stdout.trim();
  if (!/^[0-9a-f]{40}$/.test(oid)) throw new Error(`git fast-import gave no commit id: ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 500)}`);
  return oid;
}

// fast-import paths: C-style quoted when they hold a quote, backslash, newline or start with a quote.
function quotePath(p: string): string {
  return /["\\\n]/.test(p) ? JSON.stringify(p) : p;
}
