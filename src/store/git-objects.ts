import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git-cli.ts';

/** The git blob id of `data` (sha1 of "blob <len>\0" + data), without writing anything. */
export function blobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.byteLength}\0`).update(data).digest('hex');
}

/**
 * The commit `ref` names, or null when it does not exist. A branch or a ref of svc's own (`refs/heads/`,
 * `refs/sdd/`: commits only) is read from its loose file when it has one (git writes it by rename: whole or
 * not there): no git process, which costs the event loop 4–9 ms. Anything else, or a packed ref, git resolves.
 */
export async function refCommit(git: Git, ref: string): Promise<string | null> {
  if (ref.startsWith('refs/heads/') || ref.startsWith('refs/sdd/')) {
    const oid = looseRef(await git.commonDir(), ref);
    if (oid) return oid;
  }
  const r = await git.run(['rev-parse', '--verify', '-q', `${ref}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

function looseRef(commonDir: string, ref: string): string | null {
  try {
    const text = readFileSync(join(commonDir, ref), 'utf8').trim();
    return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(text) ? text : null;
  } catch {
    return null;
  }
}
