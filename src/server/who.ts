// The caller's tenant scope, resolved once per request by the pipeline (RouteContext.who).
import type { IncomingMessage } from 'node:http';
import { resolveTenantScope } from '../auth/tenants.ts';
import { unprocessable } from '../lib/http-error.ts';
import type { Actor, Principal, RouteContext } from '../lib/route.ts';

/** The tenant a request acts in from its credential's binding, X-Tenant-ID and the tenant it names (?tenant=, else the body's). */
export type TenantScope = (bound: string | null, header: string | undefined, named: string | undefined) => string;

/** Without a tenant registry: the same rules (header, ?tenant=, binding), any tenant name accepted. */
export const noTenants: TenantScope = (bound, header, named) => resolveTenantScope({ boundTenant: bound, header, query: named, registry: null });

/** Who acts and where: ?tenant= counts on every route, also where the query schema does not declare it. */
export function resolveWho(scope: TenantScope, principal: Principal, req: IncomingMessage, query: unknown, bodyTenant?: string): Actor {
  const raw = (req as { query?: Record<string, unknown> }).query?.tenant;
  const q = (query as { tenant?: string } | undefined)?.tenant ?? (typeof raw === 'string' ? raw : undefined);
  const header = req.headers['x-tenant-id'];
  const named = bodyTenant?.trim().toLowerCase() || undefined;
  const tenant = scope(principal.tenant, typeof header === 'string' ? header : undefined, q ?? named);
  if (named !== undefined && named !== tenant) throw unprocessable(`body names tenant '${named}' but the request acts in '${tenant}'`);
  return { actor: principal.actor, tenant, ...(principal.nodeId ? { node: principal.nodeId } : {}) };
}

const RESOLVE = Symbol('who.resolve');
const KEPT = Symbol('who.kept');
type Lazy = { [RESOLVE]: () => Actor; [KEPT]: Actor | undefined };

// One getter for every context. A getter made per request gave each context its own hidden class, and
// V8 allocates those in the old generation: dead at the end of the request but holding the request's
// objects until the next full GC, so every scavenge copied and promoted them (bench/README.md, "Hidden
// classes made per request").
function lazyWho(this: Lazy): Actor {
  return (this[KEPT] ??= this[RESOLVE]());
}

/** A handler's context with `who` resolved on first use and kept. */
export function withWho<P, Q, B>(ctx: Omit<RouteContext<P, Q, B>, 'who'>, resolve: () => Actor): RouteContext<P, Q, B> {
  const lazy = ctx as typeof ctx & Lazy;
  lazy[RESOLVE] = resolve;
  lazy[KEPT] = undefined;
  return Object.defineProperty(lazy, 'who', { get: lazyWho, enumerable: true }) as unknown as RouteContext<P, Q, B>;
}
