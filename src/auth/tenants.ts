// Tenant registry (.sdd/tenants.json), tenant scope of a request, and the per-tenant task quota.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { conflict, forbidden, HttpError, notFound, unprocessable } from '../lib/http-error.ts';
import { writeFileAtomic } from '../store/atomic.ts';
import type { SddLayout } from '../store/layout.ts';

/** A tenant's settings; without `max_tasks` the configured default quota applies. */
export interface TenantEntry {
  max_tasks?: number;
  [extra: string]: unknown;
}
/** The registry: tenant name → settings; always holds `default`. */
export type TenantMap = Record<string, TenantEntry>;

export const DEFAULT_TENANT = 'default';
export const TENANT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** The quota when neither the registry nor the config names one. */
export const DEFAULT_MAX_TASKS = 1000;

/** Throw 422 unless `name` is a valid tenant name. */
export function assertTenantName(name: string): string {
  if (!TENANT_NAME.test(name)) throw unprocessable(`invalid tenant name '${name}': use ${TENANT_NAME.source}`);
  return name;
}

/** Parse and check the registry file's text (pure); `default` is added when missing. */
export function parseTenants(text: string): TenantMap {
  const v: unknown = JSON.parse(text);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('tenants.json: expected an object');
  const out: TenantMap = {};
  for (const [name, entry] of Object.entries(v as Record<string, unknown>)) {
    if (!TENANT_NAME.test(name)) throw new Error(`tenants.json: invalid tenant name '${name}'`);
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`tenants.json: '${name}' is not an object`);
    const max = (entry as TenantEntry).max_tasks;
    if (max !== undefined && !(Number.isInteger(max) && max >= 0)) throw new Error(`tenants.json: '${name}'.max_tasks must be an integer >= 0`);
    out[name] = entry as TenantEntry;
  }
  return withDefault(out);
}

/** The registry as file text (pure): names and keys sorted, 2-space, trailing newline. */
export function formatTenants(map: TenantMap): string {
  const sorted: TenantMap = {};
  for (const name of Object.keys(withDefault(map)).sort()) {
    const entry = map[name] ?? {};
    sorted[name] = Object.fromEntries(Object.keys(entry).sort().map((k) => [k, entry[k]]));
  }
  return JSON.stringify(sorted, null, 2) + '\n';
}

function withDefault(map: TenantMap): TenantMap {
  return DEFAULT_TENANT in map ? map : { ...map, [DEFAULT_TENANT]: {} };
}

/** The quota of `tenant`: its `max_tasks`, else `defaultMax`. */
export function maxTasksFor(registry: TenantMap, tenant: string, defaultMax = DEFAULT_MAX_TASKS): number {
  return registry[tenant]?.max_tasks ?? defaultMax;
}

/** What a request asked for: X-Tenant-ID header and/or ?tenant= (either may be absent). */
export interface TenantScopeInput {
  /** Tenant the credential is bound to; null = may name any tenant. */
  boundTenant: string | null;
  header?: string | null;
  query?: string | null;
  /**
   * null: no registry to check against (any well-formed name is accepted). Asked only for a tenant other
   * than the default, which every registry holds (`withDefault`): most requests need no registry at all.
   */
  registry: (() => TenantMap) | null;
}

/**
 * The tenant a request acts in (pure). Header and query naming different tenants → 422; a bound
 * credential naming another tenant → 403; a tenant not in the registry → 404; nothing named → the
 * bound tenant, else `default`.
 */
export function resolveTenantScope(input: TenantScopeInput): string {
  const header = normalise(input.header);
  const query = normalise(input.query);
  if (header && query && header !== query) {
    throw unprocessable(`X-Tenant-ID '${header}' and ?tenant='${query}' name different tenants`);
  }
  const bound = input.boundTenant;
  const target = header ?? query ?? bound ?? DEFAULT_TENANT;
  if (bound !== null && target !== bound) throw forbidden(`tenant scope '${target}' is not accessible from '${bound}'`);
  if (target !== DEFAULT_TENANT && input.registry && !Object.hasOwn(input.registry(), target)) throw notFound(`unknown tenant '${target}'`);
  return target;
}

// Header values are case-insensitive and trimmed; an empty value names nothing.
function normalise(v: string | null | undefined): string | undefined {
  const t = v?.trim().toLowerCase();
  return t ? t : undefined;
}

export interface QuotaInput {
  tenant: string;
  /** The tenant's active tasks (non-terminal, not done). */
  activeCount: number;
  /** Tasks the request would create (every task of a batch). */
  adding: number;
  registry: TenantMap;
  defaultMax?: number;
}

/**
 * Throw 429 when the tenant's active tasks plus `adding` would exceed its max_tasks (pure). The answer says how to
 * raise the quota and carries no Retry-After: waiting does not help unless tasks finish.
 */
export function checkQuota(q: QuotaInput): void {
  const max = maxTasksFor(q.registry, q.tenant, q.defaultMax);
  if (q.activeCount + q.adding > max) {
    throw new HttpError(429, `Tenant '${q.tenant}' has reached max_tasks limit (${max}); finish or cancel tasks, or raise it: svc tenant set ${q.tenant} --max-tasks ${Math.max(max * 2, q.activeCount + q.adding)}`);
  }
}

/** Read the registry; a missing file is `{default: {}}`. */
export async function loadTenants(layout: SddLayout): Promise<TenantMap> {
  const text = await readFile(layout.tenants, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  return text === undefined ? withDefault({}) : parseTenants(text);
}

/** Write the registry file with `default` when it is missing or lacks `default`; returns the registry. */
export async function ensureTenants(layout: SddLayout): Promise<TenantMap> {
  return updateTenants(layout, (map) => map);
}

/** Register a tenant (409 if it exists, 422 for a bad name or quota). */
export async function addTenant(layout: SddLayout, name: string, opts: { maxTasks?: number } = {}): Promise<TenantMap> {
  assertTenantName(name);
  const entry: TenantEntry = opts.maxTasks === undefined ? {} : { max_tasks: checkedMax(opts.maxTasks) };
  return updateTenants(layout, (map) => {
    if (Object.hasOwn(map, name)) throw conflict(`tenant '${name}' already exists`);
    return { ...map, [name]: entry };
  });
}

/** Change a tenant's quota; `maxTasks: null` falls back to the default (404 for an unknown tenant). */
export async function setTenant(layout: SddLayout, name: string, opts: { maxTasks?: number | null }): Promise<TenantMap> {
  const max = opts.maxTasks === undefined || opts.maxTasks === null ? opts.maxTasks : checkedMax(opts.maxTasks);
  return updateTenants(layout, (map) => {
    const cur = map[name];
    if (!cur) throw notFound(`unknown tenant '${name}'`);
    if (max === undefined) return map;
    const { max_tasks: _old, ...rest } = cur;
    return { ...map, [name]: max === null ? rest : { ...rest, max_tasks: max } };
  });
}

/** Every tenant with its effective quota, by name. */
export async function listTenants(layout: SddLayout, defaultMax = DEFAULT_MAX_TASKS): Promise<
  { name: string; max_tasks: number; explicit: boolean }[]
> {
  const map = await loadTenants(layout);
  return Object.keys(map).sort().map((name) => ({
    name, max_tasks: maxTasksFor(map, name, defaultMax), explicit: map[name]?.max_tasks !== undefined,
  }));
}

function checkedMax(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw unprocessable(`max_tasks must be an integer >= 0, got ${n}`);
  return n;
}

const LOCK_RETRY = { retries: 200, minTimeout: 2, maxTimeout: 50, factor: 1.5, randomize: true };

// Read-modify-write under the file's lock, so two `svc tenant` commands never lose each other's change.
async function updateTenants(layout: SddLayout, change: (map: TenantMap) => TenantMap): Promise<TenantMap> {
  const path = layout.tenants;
  await mkdir(dirname(path), { recursive: true });
  const release = await lockfile.lock(path, { realpath: false, stale: 10_000, retries: LOCK_RETRY, onCompromised: () => undefined });
  try {
    const before = await readFile(path, 'utf8').catch(() => undefined);
    // `default` always exists, also before the file does (a fresh repository).
    const next = withDefault(change(before === undefined ? withDefault({}) : parseTenants(before)));
    const text = formatTenants(next);
    if (text !== before) await writeFileAtomic(path, text);
    return parseTenants(text);
  } finally {
    await release();
  }
}
