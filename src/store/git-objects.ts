import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as igit from 'isomorphic-git';
import type { Git } from './git-cli.ts';

/** One tree entry as git stores it. */
export interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: 'blob' | 'tree' | 'commit';
}

/** Object reads on one repository (isomorphic-git, one long-lived cache); state-writer.ts writes with fast-import. */
export interface ObjectStore {
  readonly gitdir: string;
  readTree(oid: string): Promise<TreeEntry[]>;
  /** Tree oid of a commit. */
  commitTree(oid: string): Promise<string>;
  /** The bytes of a blob. */
  readBlob(oid: string): Promise<Uint8Array>;
  /** Forget cached pack indexes (after gc replaced the packs). */
  resetCache(): void;
}

/** The git blob id of `data` (sha1 of "blob <len>\0" + data), without writing anything. */
export function blobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.byteLength}\0`).update(data).digest('hex');
}

/** Absolute common git dir of `git.root`, so a linked worktree shares the main repository's objects and refs. */
export async function commonGitDir(git: Git): Promise<string> {
  const { stdout } = await git.run(['rev-parse', '--path-format=absolute', '--git-common-dir']);
  return stdout.trim();
}

/** An ObjectStore on `gitdir` (use `commonGitDir`). */
export function createObjectStore(gitdir: string): ObjectStore {
  let cache = {};
  const base = { fs, gitdir };
  return {
    gitdir,
    async readTree(oid) {
      return (await igit.readTree({ ...base, cache, oid })).tree;
    },
    async commitTree(oid) {
      return (await igit.readCommit({ ...base, cache, oid })).commit.tree;
    },
    async readBlob(oid) {
      return (await igit.readBlob({ ...base, cache, oid })).blob;
    },
    resetCache: () => {
      cache = {};
    },
  };
}
