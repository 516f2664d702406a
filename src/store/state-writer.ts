import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { BIG_FOLDER_CHANGES, bigFolders, blobOf, folderTree, treeObject, writeLooseObject } from './big-folder.ts';
import { fileContent, type Content, type FolderTree } from './fast-import.ts';
import type { Git } from './git-cli.ts';
import { refCommit } from './git-objects.ts';
import { STATE_REF, type SddLayout } from './layout.ts';
import { createStateGit } from './state-git.ts';
import { commitMessage } from './message.ts';
import type { CommitResult, Note } from './types.ts';

/** One commit's worth of paths (relative to `.sdd`); `known` gives blob ids already written (null: deleted). */
export interface Batch {
  paths: string[];
  notes: Note[];
  known?: ReadonlyMap<string, string | null>;
  message?: string;
}

/** Writes batches as commits on refs/sdd/state; callers serialise calls. */
export interface StateWriter {
  commit(batch: Batch): Promise<CommitResult | null>;
  /** The ref's value, read from git now. */
  readRef(): Promise<string | null>;
  /** Take the ref's current commit as the parent of the next one, and return it. */
  reload(): Promise<string | null>;
  /** Write files (relative to `.sdd`) as blobs with one `git hash-object` process; rel → oid. */
  writeBlobs(rels: string[]): Promise<Map<string, string>>;
  /** End the long-lived git processes (they start again with the next commit): after a repack, at a stop. */
  recycle(): Promise<void>;
}

export interface StateWriterOptions {
  layout: SddLayout;
  git: Git;
  log: Logger;
  clock: Clock;
  /**
   * The text a writer still holds for a path (null: deleted) before its file has it, else undefined.
   * Asked in the same turn as the file is read, so the commit sees the newest content, never a torn file.
   */
  pending?: (abs: string) => string | null | undefined;
  /** Attempts after a lost compare-and-swap of the ref (default 5). */
  maxCasRetries?: number;
  /** Told of every attempt to commit: moved the ref (ok), the ref moved meanwhile (lost), or failed; its seconds. */
  onAttempt?(result: 'ok' | 'lost' | 'error', seconds: number): void;
  /** Changed paths in one folder from which its tree is built outside fast-import (default BIG_FOLDER_CHANGES). */
  bigFolderChanges?: number;
}

/**
 * A StateWriter; creating one does no IO. `git fast-import` writes the blobs, trees and commit as one
 * packfile (fsynced), a few files per commit however many paths changed; each path's content is read as
 * the stream reaches it and large append-only files are streamed, so memory does not grow with the batch.
 * A commit whose `.sdd` tree equals its parent's is not published (the ref stays). Then the ref moves
 * by compare-and-swap. Both go through long-lived git processes (state-git.ts).
 */
export function createStateWriter(opts: StateWriterOptions): StateWriter {
  const { layout, git, log, clock } = opts;
  const state = createStateGit(git);
  let head: string | null = null;
  let loaded = false;

  const readRef = () => refCommit(git, STATE_REF);
  const reload = async (): Promise<string | null> => {
    head = await readRef();
    loaded = true;
    return head;
  };

  // A path's content for the commit: a known blob id, the writer's pending text, else the file now.
  const content = (batch: Batch) => (path: string): Content | null => {
    const rel = path.slice('.sdd/'.length);
    const known = batch.known?.get(rel);
    if (known !== undefined) return known === null ? { kind: 'deleted' } : { kind: 'blob', oid: known };
    const abs = join(layout.sdd, rel);
    const text = opts.pending?.(abs);
    if (text !== undefined) return text === null ? { kind: 'deleted' } : { kind: 'bytes', data: Buffer.from(text, 'utf8') };
    return fileContent(abs);
  };

  // The commit's paths; a folder with many of them gets its tree built here (big-folder.ts) on `parent`'s:
  // its changed files go to fast-import one by one as they are read (their ids are all known once the last
  // is), then its tree is built and written, and the commit names it.
  let objectsDir: string | undefined;
  const prepare = async (batch: Batch, parent: string | null) => {
    const paths = batch.paths.map((p) => `.sdd/${p}`);
    const big = bigFolders(paths, opts.bigFolderChanges ?? BIG_FOLDER_CHANGES);
    if (!big.size) return { paths };
    const objects = (objectsDir ??= join(await git.commonDir(), 'objects'));
    const read = content(batch);
    const before = new Map<string, Buffer | null>(); // each folder's tree in the parent, read while git is free
    for (const folder of big.keys()) before.set(folder, parent ? await folderTree(git, parent, folder) : null);
    const changes = new Map<string, Map<string, string | null>>();
    function* blobs() {
      for (const [folder, list] of big) {
        const changed = new Map<string, string | null>();
        changes.set(folder, changed);
        for (const path of list) {
          const blob = blobOf(read(path));
          if (blob === undefined) continue;
          changed.set(path.slice(folder.length + 1), blob?.oid ?? null);
          if (blob?.data) yield blob.data;
        }
      }
    }
    const trees = async () => {
      const out: FolderTree[] = [];
      for (const folder of big.keys()) {
        const tree = treeObject(before.get(folder) ?? null, changes.get(folder)!);
        if (tree) await writeLooseObject(objects, tree.oid, tree.bytes);
        out.push({ folder, oid: tree?.oid ?? null });
      }
      return out;
    };
    return { paths: paths.filter((p) => !big.has(p.slice(0, p.lastIndexOf('/')))), blobs: blobs(), trees };
  };

  const commit = async (batch: Batch): Promise<CommitResult | null> => {
    const max = opts.maxCasRetries ?? 5;
    if (!loaded) await reload();
    const message = batch.message ?? commitMessage(batch.notes, batch.paths.length);
    for (let attempt = 0; ; attempt++) {
      const t0 = performance.now();
      const done = (result: 'ok' | 'lost' | 'error') => opts.onAttempt?.(result, (performance.now() - t0) / 1000);
      let refused: string | null;
      let imported: { oid: string; changed: boolean };
      try {
        imported = await state.importCommit({ parent: head, message, timestampMs: clock.now(), content: content(batch), ...await prepare(batch, head) });
        if (!imported.changed) return null;
        refused = await state.moveRef(STATE_REF, imported.oid, head);
      } catch (err) {
        done('error');
        throw err;
      }
      if (refused === null) {
        done('ok');
        head = imported.oid;
        return { oid: imported.oid, message, paths: batch.paths.length };
      }
      done('lost');
      if (attempt >= max) throw new Error(`${STATE_REF} update failed after ${attempt + 1} attempts: ${refused}`);
      log.warn(`${STATE_REF} moved under the committer; committing again on top`, { expected: head, attempt: attempt + 1 });
      await reload();
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

  return { commit, readRef, reload, writeBlobs, recycle: () => state.recycle() };
}

