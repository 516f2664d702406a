// IO at the edge: read what the tree shows (audit chain, config, credentials, SBOM, lock files) into Facts.
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
// The modules themselves, not the domains' index.ts: a check is a new process, and the indexes load the
// server side too (routes, metrics, isomorphic-git), several times what a check runs (bench/README.md).
import { listTokens, tokenState } from '../auth/tokens.ts';
import { listSegments } from '../observe/audit.ts';
import { AuditKeyError } from '../observe/audit-key.ts';
import { formatAuditBreak } from '../observe/audit-verify.ts';
import { createGit } from '../store/git-cli.ts';
import { refCommit } from '../store/git-objects.ts';
import { STATE_REF, type SddLayout } from '../store/layout.ts';
import { verifyChainCached } from './audit-chain.ts';
import type { Facts } from './evidence.ts';

const SBOM_FILES = ['sbom.json', 'sbom.cdx.json', 'sbom.spdx.json', 'bom.json', 'bom.cdx.json'];
const LOCK_FILES = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lockb', 'poetry.lock', 'uv.lock', 'Pipfile.lock', 'Cargo.lock', 'go.sum', 'Gemfile.lock', 'composer.lock'];

/** Gather the facts of a tree; `now` (ms) decides which credentials are still live. */
export async function gatherFacts(layout: SddLayout, now: number): Promise<Facts> {
  const [stateCommit, audit, config, credentials, sbom] = await Promise.all([
    stateHead(layout.root), auditFacts(layout), readConfig(layout), liveCredentials(layout, now), sbomFiles(layout),
  ]);
  return { stateCommit, audit, config, credentials, sbom, lockfiles: LOCK_FILES.filter((f) => existsSync(join(layout.root, f))) };
}

/** The commit refs/sdd/state points at, or null. */
export async function stateHead(root: string): Promise<string | null> {
  return refCommit(createGit(root), STATE_REF).catch(() => null);
}

async function auditFacts(layout: SddLayout): Promise<Facts['audit']> {
  const names = await listSegments(layout.auditDir);
  const archived = (await readdir(join(layout.auditDir, 'archive')).catch(() => [] as string[])).filter((n) => /^\d{4}-\d{2}-\d{2}\.jsonl\.gz$/.test(n));
  const segments = [
    ...archived.map((n) => ({ path: `.sdd/audit/archive/${n}`, date: n.slice(0, 10) })),
    ...names.map((n) => ({ path: `.sdd/audit/${n}`, date: n.slice(0, 10) })),
  ].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  try {
    const v = await verifyChainCached(layout);
    if (v.records === 0 && v.ok) return { segments, records: 0, verdict: 'empty' };
    return { segments, records: v.records, verdict: v.ok ? 'ok' : 'broken', ...(v.firstBroken ? { broken: formatAuditBreak(v.firstBroken) } : {}) };
  } catch (err) {
    if (!(err instanceof AuditKeyError)) throw err;
    // A clone without .sdd/secrets/audit.key: the records are there, the HMAC cannot be checked.
    return { segments, records: await countRecords(layout, names), verdict: 'no-key' };
  }
}

async function countRecords(layout: SddLayout, names: string[]): Promise<number> {
  let n = 0;
  for (const name of names) n += (await readFile(join(layout.auditDir, name), 'utf8')).split('\n').filter((l) => l.trim()).length;
  return n;
}

type Raw = Record<string, any>;
async function readConfig(layout: SddLayout): Promise<Facts['config']> {
  const text = await readFile(layout.config, 'utf8').catch(() => undefined);
  let raw: Raw = {};
  try { raw = (text ? parse(text) : {}) ?? {}; } catch { raw = {}; }
  const obj = (v: unknown): Raw => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
  const server = obj(raw.server);
  const auth = obj(raw.auth);
  const sso = obj(auth.sso);
  const tls = obj(server.tls);
  const gates = Array.isArray(raw.gates) ? raw.gates.filter((g: Raw) => g && g.required !== false && typeof g.command === 'string') : [];
  return {
    present: text !== undefined,
    authEnabled: auth.enabled !== false,
    requiredGates: gates.length,
    publicUrl: typeof server.public_url === 'string' && server.public_url ? server.public_url : null,
    serverTls: Boolean(tls.cert && tls.key),
    sso: { configured: Boolean(obj(sso.oidc).issuer_url || obj(sso.saml).idp_sso_url), requireMfa: sso.require_mfa === true, sessionTtlS: Number(sso.session_ttl_s ?? 86_400) || 86_400 },
    hipaa: String(raw.compliance ?? '').toLowerCase() === 'hipaa',
  };
}

async function liveCredentials(layout: SddLayout, now: number): Promise<Facts['credentials']> {
  const tokens = (await listTokens(layout).catch(() => [])).filter((t) => tokenState(t, now) === 'active');
  const out: Facts['credentials'] = tokens.map((t) => ({
    kind: 'token', ref: '.sdd/secrets/tokens.json', created_at: t.created_at, role: t.role,
    lifetime_h: t.expires_at ? Math.ceil((Date.parse(t.expires_at) - Date.parse(t.created_at)) / 3_600_000) : null,
  }));
  for (const [kind, file, role] of [['admin_token', layout.adminToken, 'admin'], ['cluster_secret', join(layout.secrets, 'cluster.secret'), null]] as const) {
    const st = await stat(file).catch(() => undefined);
    if (st) out.push({ kind, ref: `.sdd/secrets/${file.split('/').pop()}`, created_at: st.mtime.toISOString(), role, lifetime_h: null });
  }
  return out;
}

async function sbomFiles(layout: SddLayout): Promise<string[]> {
  const root = SBOM_FILES.filter((f) => existsSync(join(layout.root, f)));
  const dir = (await readdir(join(layout.sdd, 'artifacts', 'sbom')).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  return [...root, ...dir.map((n) => `.sdd/artifacts/sbom/${n}`)];
}
