// The cluster secret: signs node tokens, and as a bearer it holds every cluster scope.
import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureSecretsDir } from '../auth/index.ts';
import type { SddLayout } from '../store/layout.ts';

/** A secret shorter than this is refused: it would be guessable. */
export const MIN_SECRET_LENGTH = 32;

/** Where the secret file lives (never committed: `.sdd/secrets/`). */
export const secretPath = (layout: SddLayout): string => join(layout.secrets, 'cluster.secret');

/** The secret and where it came from. */
export interface ClusterSecret {
  secret: string;
  source: 'env' | 'file';
  /** The file was created by this call. */
  created: boolean;
}

/** SERVICE_CLUSTER_SECRET when given, else `.sdd/secrets/cluster.secret` (created 0600 with 32 random bytes). */
export async function loadClusterSecret(layout: SddLayout, fromEnv?: string): Promise<ClusterSecret> {
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < MIN_SECRET_LENGTH) throw new Error(`SERVICE_CLUSTER_SECRET is ${fromEnv.length} characters long; it needs at least ${MIN_SECRET_LENGTH} (for example: openssl rand -hex 32)`);
    return { secret: fromEnv, source: 'env', created: false };
  }
  const path = secretPath(layout);
  let created = false;
  if (!(await stat(path).catch(() => undefined))) {
    await ensureSecretsDir(layout);
    const fh = await open(path, 'wx', 0o600).catch((e: NodeJS.ErrnoException) => { if (e.code === 'EEXIST') return undefined; throw e; });
    if (fh) {
      try { await fh.writeFile(randomBytes(32).toString('hex') + '\n'); await fh.sync(); created = true; } finally { await fh.close(); }
    }
  }
  // Whoever reads it can mint a node token with every scope.
  const st = await stat(path);
  if ((st.mode & 0o077) !== 0) throw new Error(`${path}: mode ${(st.mode & 0o777).toString(8)} gives group/others access; chmod 600 it`);
  const secret = (await readFile(path, 'utf8')).trim();
  if (secret.length < MIN_SECRET_LENGTH) throw new Error(`${path}: the secret is shorter than ${MIN_SECRET_LENGTH} characters`);
  return { secret, source: 'file', created };
}
