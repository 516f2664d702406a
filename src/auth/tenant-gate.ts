import { fileCache } from '../lib/file-cache.ts';
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

/** A gate over `.sdd/tenants.json`, re-read when the file changes. */
export function createTenantGate(deps: { layout: SddLayout; log: Logger; defaultMax: number }): TenantGate {
  const current = fileCache(deps.layout.tenants, parseTenants, { [DEFAULT_TENANT]: {} } as TenantMap, (err) =>
    deps.log.warn(`tenants: keeping the last good registry; ${deps.layout.tenants} is invalid: ${err.message}`));
  return {
    scope: (bound, header, query) => resolveTenantScope({ boundTenant: bound, header, query, registry: current }),
    checkQuota: (tenant, activeCount, adding) => checkQuota({ tenant, activeCount, adding, registry: current(), defaultMax: deps.defaultMax }),
  };
}
