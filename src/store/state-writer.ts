import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Git } from './git-cli.ts';
import { commonGitDir, createObjectStore, type ObjectStore } from './git-objects.ts';
import type { SddLayout } from './layout.ts';
import { commitMessage } from './message.ts';
import { MemTree } from './tree.ts';
import type { CommitResult } from './types.ts';

/** The ref every state commit moves. */
export const STATE_REF = 'refs/sdd/state';
const ZERO = '0'.repeat(40);

/**
 * One commit's worth of paths (relative to `.sdd`); `known` gives blob ids already written, `texts` the
 * content of paths whose writer said it (null = deleted in both); other paths are read from their files.
 */
export interface Batch {
  paths: string[];
  notes: string[];
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

/** A StateWriter; it loads lazily, so creating one does no IO. */
export function createStateWriter(opts: StateWriterOptions): StateWriter {
  const { layout, git, log, clock } = opts;
  let objects: ObjectStore | null = null;
  let head: string | null = null;
  let headTree: string | null = null;
  let tree: MemTree | null = null;

  const readRef = async () => {
    const r = await git.run(['rev-parse', '--verify', '-q', `${STATE_REF}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : null;
  };
  // Base the in-memory tree on the ref's current commit (at start, and after losing a CAS).
  const reload = async (): Promise<{ objects: ObjectStore; tree: MemTree }> => {
    objects ??= createObjectStore(await commonGitDir(git));
    head = await readRef();
    headTree = head ? await objects.commitTree(head) : null;
    tree = new MemTree(objects, headTree);
    return { objects, tree };
  };

  // Put every path of the batch into the tree: known ids, known texts, else the file's bytes (missing = deleted).
  const apply = async (o: ObjectStore, t: MemTree, batch: Batch) => {
    for (const rel of batch.paths) {
      const known = batch.known?.get(rel);
      const text = batch.texts?.get(rel);
      let oid: string | null | undefined = known;
      if (known === undefined && text !== undefined) oid = text === null ? null : await o.writeBlob(Buffer.from(text, 'utf8'));
      else if (known === undefined) {
        const data = await readFile(join(layout.sdd, rel)).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return null;
          if (err.code === 'EISDIR') return undefined;
          throw err;
        });
        if (data === undefined) continue;
        oid = data ? await o.writeBlob(data) : null;
      }
      if (oid) await t.set(`.sdd/${rel}`, oid);
      else await t.remove(`.sdd/${rel}`);
    }
  };

  const commit = async (batch: Batch): Promise<CommitResult | null> => {
    const max = opts.maxCasRetries ?? 5;
    let state = objects && tree ? { objects, tree } : await reload();
    for (let attempt = 0; ; attempt++) {
      await apply(state.objects, state.tree, batch);
      const treeOid = await state.tree.write();
      if (treeOid === headTree) return null;
      const message = batch.message ?? commitMessage(batch.notes, batch.paths.length);
      const parents = head ? [head] : [];
      const oid = await state.objects.writeCommit({ tree: treeOid, parents, message: message + '\n', timestampMs: clock.now() });
      await state.objects.syncObjects();
      const moved = await git.mutate(['update-ref', '-m', message, STATE_REF, oid, head ?? ZERO], { allowFail: true });
      if (moved.code === 0) {
        head = oid;
        headTree = treeOid;
        return { oid, message, paths: batch.paths.length };
      }
      if (attempt >= max) throw new Error(`${STATE_REF} update failed after ${attempt + 1} attempts: ${moved.stderr.trim()}`);
      log.warn(`${STATE_REF} moved under the committer; committing again on top`, { expected: head, attempt: attempt + 1 });
      state = await reload();
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
