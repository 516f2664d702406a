import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git-cli.ts';
import { STATE_REF } from './layout.ts';

/** The git blob id of `data` (sha1 of "blob <len>\0" + data), without writing anything. */
export function blobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.byteLength}\0`).update(data).digest('hex');
}

/** Absolute common git dir of `git.root`, so a linked worktree shares the main repository's objects and refs. */
export function commonGitDir(git: Git): Promise<string> {
  return git.commonDir();
}

/** The commit refs/sdd/state names (null: none yet): its loose file, else git (packed). */
export async function stateHead(git: Git): Promise<string | null> {
  const loose = looseRef(await git.commonDir(), STATE_REF);
  if (loose) return loose;
  const r = await git.run(['rev-parse', '--verify', '-q', `${STATE_REF}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * A ref's object id read from its loose file in `commonDir` (git writes it by rename: whole or not there), or
 * null when git must be asked: packed, symbolic, or a ref store other than files. A git process costs the
 * event loop 4–9 ms; this read, microseconds.
 */
export function looseRef(commonDir: string, ref: string): string | null {
  try {
    const text = readFileSync(join(commonDir, ref), 'utf8').trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(text) ? text : null;
  } catch {
    return null;
  }
}
