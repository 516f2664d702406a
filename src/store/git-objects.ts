import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as igit from 'isomorphic-git';
import type { Git } from './git-cli.ts';

/** One tree entry as git stores it. */
export interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: 'blob' | 'tree' | 'commit';
}

/** Object reads and writes on one repository (isomorphic-git, one long-lived cache). */
export interface ObjectStore {
  readonly gitdir: string;
  readTree(oid: string): Promise<TreeEntry[]>;
  /** Tree oid of a commit. */
  commitTree(oid: string): Promise<string>;
  writeBlob(data: Uint8Array): Promise<string>;
  writeTree(entries: TreeEntry[]): Promise<string>;
  writeCommit(c: { tree: string; parents: string[]; message: string; timestampMs: number }): Promise<string>;
  /** fsync every object written since the last call (and its folder): call before a ref points at them. */
  syncObjects(): Promise<void>;
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

// isomorphic-git writes loose objects in place and unsynced; a crash could leave a torn object that
// "exists" forever. This fs writes them like git does (temp + rename) and remembers them, so
// `syncObjects` can fsync one commit's objects together before the ref moves (one fsync each,
// in parallel: measured about 5 ms less per commit than fsync inside every write).
function objectFs(pending: Set<string>) {
  return {
    promises: {
      ...fs.promises,
      async writeFile(path: string, data: string | Uint8Array, opts?: unknown) {
        const tmp = join(dirname(path), `tmp_obj_${process.pid}_${randomBytes(6).toString('hex')}`);
        try {
          await fs.promises.writeFile(tmp, data, { ...(opts as object), mode: 0o444, flag: 'wx' });
          await rename(tmp, path);
          pending.add(path);
        } catch (err) {
          await unlink(tmp).catch(() => undefined);
          throw err;
        }
      },
      mkdir: (path: string, opts?: fs.MakeDirectoryOptions) => mkdir(path, opts),
    },
  };
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** An ObjectStore on `gitdir` (use `commonGitDir`). */
export function createObjectStore(gitdir: string): ObjectStore {
  let cache = {};
  const pending = new Set<string>();
  const base = { fs: objectFs(pending), gitdir };
  const who = (timestampMs: number) => ({ name: 'svc', email: 'svc@localhost', timestamp: Math.floor(timestampMs / 1000), timezoneOffset: 0 });
  return {
    gitdir,
    async readTree(oid) {
      return (await igit.readTree({ ...base, cache, oid })).tree;
    },
    async commitTree(oid) {
      return (await igit.readCommit({ ...base, cache, oid })).commit.tree;
    },
    writeBlob: (blob) => igit.writeBlob({ ...base, blob }),
    writeTree: (tree) => igit.writeTree({ ...base, tree }),
    writeCommit: ({ tree, parents, message, timestampMs }) =>
      igit.writeCommit({ ...base, commit: { tree, parent: parents, message, author: who(timestampMs), committer: who(timestampMs) } }),
    async syncObjects() {
      const files = [...pending];
      pending.clear();
      const dirs = [...new Set(files.map((f) => dirname(f)))];
      await Promise.all([...files, ...dirs].map(fsyncPath));
    },
    resetCache: () => {
      cache = {};
    },
  };
}
