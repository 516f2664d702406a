import { readFileSync, statSync } from 'node:fs';
import type { Logger } from '../lib/log.ts';
import type { SddLayout } from '../store/layout.ts';
import { DEFAULT_TENANT, checkQuota, parseTenants, resolveTenantScope, type TenantMap } from './tenants.ts';

/** Tenant scope and quota, answered synchronously on the request path. */
export interface TenantGate {
  /** The tenant a request acts in (403 bound elsewhere, 404 unknown, 422 header/query disagree). */
  scope(bound: string | null, header: string | undefined, query: string | undefined): string;
  /** Throw 429 (Retry-After) when `adding` more active tasks exceed the tenant's max_tasks. */
  checkQuota(tenant: string, activeCount: number, adding: number): void;
}

/** A gate over `.sdd/tenants.json`, re-read when the file changes (a stat per call, ~µs). */
export function createTenantGate(deps: { layout: SddLayout; log: Logger; defaultMax: number }): TenantGate {
  let stamp = '';
  let registry: TenantMap = { [DEFAULT_TENANT]: {} };
  const current = (): TenantMap => {
    const st = statSync(deps.layout.tenants, { throwIfNoEntry: false });
    const next = st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'absent';
    if (next === stamp) return registry;
    stamp = next;
    if (!st) return (registry = { [DEFAULT_TENANT]: {} });
    try {
      registry = parseTenants(readFileSync(deps.layout.tenants, 'utf8'));
    } catch (err) {
      deps.log.warn(`tenants: keeping the last good registry; ${deps.layout.tenants} is invalid: ${(err as Error).message}`);
    }
    return registry;
  };
  return {
    scope: (bound, header, query) => resolveTenantScope({ boundTenant: bound, header, query, registry: current() }),
    checkQuota: (tenant, activeCount, adding) => checkQuota({ tenant, activeCount, adding, registry: current(), defaultMax: deps.defaultMax }),
  };
}
