import { createHash } from 'node:crypto';
import type { Git } from './git-cli.ts';

/** The git blob id of `data` (sha1 of "blob <len>\0" + data), without writing anything. */
export function blobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.byteLength}\0`).update(data).digest('hex');
}

/** Absolute common git dir of `git.root`, so a linked worktree shares the main repository's objects and refs. */
export async function commonGitDir(git: Git): Promise<string> {
  const { stdout } = await git.run(['rev-parse', '--path-format=absolute', '--git-common-dir']);
  return stdout.trim();
}
