import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { Type, type Static, Value } from '../lib/typebox.ts';
import lockfile from 'proper-lockfile';
import type { Clock } from '../lib/clock.ts';
import { notFound } from '../lib/http-error.ts';
import type { Role } from '../lib/route.ts';
import { writeFileAtomic } from '../store/atomic.ts';
import type { SddLayout } from '../store/layout.ts';

export const ROLES = ['admin', 'operator', 'agent', 'viewer'] as const satisfies readonly Role[];
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/** One issued API token; only the SHA-256 of the secret is stored. */
export const TokenRecord = Type.Object({
  id: Type.String(),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  tenant: Nullable(Type.String()),
  label: Nullable(Type.String()),
  created_at: Type.String(),
  expires_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  task_id: Type.Optional(Type.String()),
}, { $id: 'TokenRecord' });
export type TokenRecord = Static<typeof TokenRecord>;

/** `.sdd/secrets/tokens.json`. */
export const TokenFile = Type.Object({ version: Type.Integer({ minimum: 0 }), tokens: Type.Array(TokenRecord) });
export type TokenFile = Static<typeof TokenFile>;

export type TokenState = 'active' | 'revoked' | 'expired';
export type Random = (bytes: number) => Buffer;

/** Hex SHA-256 of a token: what tokens.json stores. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** A new secret: `svc_` + base64url of 32 random bytes. */
export const generateToken = (random: Random = randomBytes): string => `svc_${random(32).toString('base64url')}`;

/** Whether a record still grants access at `now` (ms). */
export function tokenState(rec: TokenRecord, now: number): TokenState {
  if (rec.revoked_at) return 'revoked';
  if (rec.expires_at && Date.parse(rec.expires_at) <= now) return 'expired';
  return 'active';
}

/** '30d' | '12h' | '45m' | '90s' → milliseconds; anything else throws. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+)\s*([dhms])\s*$/i.exec(text);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[m?.[2]?.toLowerCase() as 'd' | 'h' | 'm' | 's'];
  if (!m || !unit || Number(m[1]) <= 0) throw new Error(`invalid duration '${text}': expected e.g. 30d, 12h, 45m`);
  return Number(m[1]) * unit;
}

/** Parse tokens.json text; throws naming the first problem. */
export function parseTokenFile(text: string): TokenFile {
  const data: unknown = JSON.parse(text);
  const first = Value.Errors(TokenFile, data).First();
  if (first) throw new Error(`tokens.json: ${first.path || '/'}: ${first.message}`);
  return data as TokenFile;
}

/** Read tokens.json (absent → no tokens). */
export async function readTokenFile(layout: SddLayout): Promise<TokenFile> {
  try {
    return parseTokenFile(await readFile(layout.tokens, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 0, tokens: [] };
    throw e;
  }
}

/** Create `.sdd/secrets` with mode 0700 (tightened if it already exists). */
export async function ensureSecretsDir(layout: SddLayout): Promise<void> {
  await mkdir(layout.secrets, { recursive: true, mode: 0o700 });
  await chmod(layout.secrets, 0o700);
}

/** Write a secret file atomically with mode 0600 (temp file, fsync, rename, folder fsync). */
export function writeSecretFile(path: string, text: string): Promise<void> {
  return writeFileAtomic(path, text, { mode: 0o600 });
}

/** How long a task-scoped agent token stays listed after it was revoked or expired (then pruned). */
export const TASK_TOKEN_KEEP_MS = 86_400_000;

/**
 * The records worth keeping at `now`: an agent session's task-scoped token is dropped a day after it
 * ended (one is issued per run, so they would pile up); every other token stays until deleted by hand.
 */
export function pruneTokens(tokens: TokenRecord[], now: number): TokenRecord[] {
  return tokens.filter((t) => {
    if (!t.task_id) return true;
    const ended = t.revoked_at ? Date.parse(t.revoked_at) : t.expires_at ? Date.parse(t.expires_at) : NaN;
    return !(ended + TASK_TOKEN_KEEP_MS <= now);
  });
}

// Read-modify-write of tokens.json under its lock, so two CLIs never lose each other's token; every
// write also prunes task tokens that ended long ago.
async function updateTokenFile<T>(layout: SddLayout, clock: Clock, change: (f: TokenFile) => T): Promise<T> {
  await ensureSecretsDir(layout);
  const release = await lockfile.lock(layout.tokens, {
    realpath: false, stale: 10_000, retries: { retries: 100, minTimeout: 5, maxTimeout: 100 }, onCompromised: () => {},
  });
  try {
    const file = await readTokenFile(layout);
    const result = change(file);
    file.tokens = pruneTokens(file.tokens, clock.now());
    file.version += 1;
    await writeSecretFile(layout.tokens, JSON.stringify(file, null, 2) + '\n');
    return result;
  } finally {
    await release();
  }
}

export interface CreateTokenOptions {
  role: Role;
  tenant?: string | null;
  /** '30d', '12h', '45m'; absent = never expires. */
  expiresIn?: string;
  label?: string | null;
  /** Scope an agent token to one task. */
  taskId?: string;
}

/** Issue a token: stores its hash and returns the plaintext, which is never shown again. */
export async function createToken(
  layout: SddLayout, opts: CreateTokenOptions, clock: Clock, random: Random = randomBytes,
): Promise<{ token: string; record: TokenRecord }> {
  if (!(ROLES as readonly string[]).includes(opts.role)) throw new Error(`unknown role '${opts.role}'`);
  const ttl = opts.expiresIn ? parseDuration(opts.expiresIn) : null;
  const token = generateToken(random);
  const hash = hashToken(token);
  const record: TokenRecord = {
    id: `tok_${hash.slice(0, 12)}`, hash, role: opts.role, tenant: opts.tenant ?? null, label: opts.label ?? null,
    created_at: clock.iso(), expires_at: ttl === null ? null : new Date(clock.now() + ttl).toISOString(), revoked_at: null,
    ...(opts.taskId ? { task_id: opts.taskId } : {}),
  };
  await updateTokenFile(layout, clock, (f) => { f.tokens.push(record); });
  return { token, record };
}

/** Every token record (hashes included; never plaintext). */
export async function listTokens(layout: SddLayout): Promise<TokenRecord[]> {
  return (await readTokenFile(layout)).tokens;
}

/** Mark a token revoked (idempotent); an unknown id throws 404. */
export async function revokeToken(layout: SddLayout, id: string, clock: Clock): Promise<TokenRecord> {
  return updateTokenFile(layout, clock, (f) => {
    const rec = f.tokens.find((t) => t.id === id);
    if (!rec) throw notFound(`Token '${id}' not found`);
    rec.revoked_at ??= clock.iso();
    return rec;
  });
}

/** Plaintext of `.sdd/secrets/admin.token`, or undefined when absent or empty. */
export async function readAdminTokenFile(layout: SddLayout): Promise<string | undefined> {
  try {
    return (await readFile(layout.adminToken, 'utf8')).trim() || undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * First start: when no admin credential exists (no SERVICE_AUTH_TOKEN given in `envToken`, no
 * admin.token, no active admin token in tokens.json), write a new admin token to
 * `.sdd/secrets/admin.token` (0600).
 */
export async function ensureAdminToken(
  layout: SddLayout, clock: Clock, opts: { envToken?: string; random?: Random } = {},
): Promise<{ path: string; created: boolean }> {
  const path = layout.adminToken;
  if (opts.envToken || (await readAdminTokenFile(layout))) return { path, created: false };
  const now = clock.now();
  const { tokens } = await readTokenFile(layout);
  if (tokens.some((t) => t.role === 'admin' && tokenState(t, now) === 'active')) return { path, created: false };
  await ensureSecretsDir(layout);
  await writeSecretFile(path, generateToken(opts.random) + '\n');
  return { path, created: true };
}
