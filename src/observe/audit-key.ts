// The audit chain's key: .sdd/secrets/audit.key, 64 hex characters, 0600 in a 0700 folder.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import type { SddLayout } from '../store/layout.ts';

/** The key file is missing, malformed or readable by group/others. */
export class AuditKeyError extends Error {
  constructor(readonly path: string, reason: string) {
    super(`audit key ${path}: ${reason}`);
    this.name = 'AuditKeyError';
  }
}

/** Read the audit key (64 hex chars → 32 bytes); with `create`, make it (0600, secrets dir 0700) when absent. */
export async function loadAuditKey(layout: SddLayout, opts: { create: boolean }): Promise<Buffer> {
  const path = layout.auditKey;
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (!st) {
    if (!opts.create) throw new AuditKeyError(path, 'missing');
    await createKey(layout);
    return loadAuditKey(layout, { create: false });
  }
  // A key others can read lets them forge the chain: refuse it instead of fixing it silently.
  if ((st.mode & 0o077) !== 0) {
    throw new AuditKeyError(path, `mode ${(st.mode & 0o777).toString(8)} gives group/others access; chmod 600 it`);
  }
  const hex = (await readFile(path, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new AuditKeyError(path, 'expected 64 hex characters');
  return Buffer.from(hex, 'hex');
}

async function createKey(layout: SddLayout): Promise<void> {
  await mkdir(layout.sdd, { recursive: true });
  await mkdir(layout.secrets, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
  // 'wx': if another process created it first, keep theirs.
  const fh = await open(layout.auditKey, 'wx', 0o600).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'EEXIST') return undefined;
    throw e;
  });
  if (!fh) return;
  try {
    await fh.writeFile(randomBytes(32).toString('hex') + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
}
