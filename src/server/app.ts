import * as http from 'node:http';
import type { TSchema } from '../lib/typebox.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Config } from '../config/index.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { HttpError, notFound } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import { KeyedSlots } from '../lib/slots.ts';
import { cidrSet, createAllowlist, loopbackExempt } from './allowlist.ts';
import { closeGracefully, dispatch, listen } from './dispatch.ts';
import { limitConnections } from './connections.ts';
import type { HttpMetrics } from './metrics.ts';
import { buildOpenApi, collectSchemas } from './openapi.ts';
import { begin, checkAllowlist, fail, rateLimit, routeHandler, type PipelineDeps } from './pipeline.ts';
import { createRateLimiter } from './rate-limit.ts';
import { systemRoutes, type ServerHooks } from './system-routes.ts';
import { ensureFormats } from './validate.ts';
import type { TenantScope } from './who.ts';

export interface CreateServerOptions {
  /** Domain routes; the system routes (/, /health*, /docs, /openapi.json, /metrics, …) are added. */
  routes: Route[];
  log: Logger;
  config: Config;
  authenticator: Authenticator;
  metrics: HttpMetrics;
  hooks?: ServerHooks;
  version: string;
  /** Component schemas that route schemas reference with Type.Ref (e.g. Task). */
  schemas?: TSchema[];
  clock?: Clock;
  /** Loopback clients pass a non-empty allowlist without being listed (default: server.exempt_loopback). */
  allowLoopback?: boolean;
  /** The tenant scope of a request (`ctx.who`): the tenant registry's rules (auth's TenantGate.scope). */
  tenantScope?: TenantScope;
}

export interface SvcServer {
  server: http.Server;
  /** The OpenAPI 3.1 document served at /openapi.json. */
  openapi: Record<string, unknown>;
  /** The metrics passed in (register domain gauges here). */
  metrics: HttpMetrics;
  listen(port: number, host: string): Promise<{ port: number; host: string }>;
  /** Stop accepting, let in-flight requests finish for up to `graceMs`, then cut the rest. */
  close(graceMs?: number): Promise<void>;
}

/** Static segments before parameters, position by position: the order routes are listed in (the router decides the same way). */
export function sortRoutes(routes: readonly Route[]): Route[] {
  const rank = (r: Route) => r.path.split('/').map((s) => (s.startsWith(':') ? 1 : 0));
  return [...routes].sort((a, b) => {
    const ra = rank(a), rb = rank(b);
    for (let i = 0; i < Math.min(ra.length, rb.length); i++) if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
    return 0;
  });
}

function assertUnique(routes: readonly Route[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    const key = `${r.method} ${r.path.replace(/:[^/]+/g, ':')}`;
    if (seen.has(key)) throw new Error(`route defined twice: ${r.method} ${r.path}`);
    seen.add(key);
  }
}

/** Assemble the HTTP server from route records: validation, auth, limits, errors, docs, metrics. */
export function createServer(opts: CreateServerOptions): SvcServer {
  const clock = opts.clock ?? systemClock;
  const { server: cfg } = opts.config;
  ensureFormats();
  let openapi: Record<string, unknown> = {};
  const routes = sortRoutes([
    ...systemRoutes({ version: opts.version, metrics: opts.metrics, clock, openapi: () => openapi, ...(opts.hooks ? { hooks: opts.hooks } : {}) }),
    ...opts.routes,
  ]);
  assertUnique(routes);
  openapi = buildOpenApi(routes, { title: 'svc', version: opts.version, description: 'Git-native governance layer for AI coding agents' }, opts.schemas);
  const deps: PipelineDeps = {
    authenticator: opts.authenticator, log: opts.log, metrics: opts.metrics, bodyLimit: cfg.body_limit_bytes,
    allowlist: createAllowlist(cfg.allowed_ips, { allowLoopback: opts.allowLoopback ?? loopbackExempt(cfg) }),
    limiter: cfg.rate_limit.enabled ? createRateLimiter({ ratePerS: cfg.rate_limit.requests_per_s, burst: cfg.rate_limit.burst, clock }) : null,
    exemptLoopback: cfg.rate_limit.exempt_loopback ?? loopbackExempt(cfg),
    trustProxy: cfg.trust_proxy.length ? cidrSet(cfg.trust_proxy, 'server.trust_proxy') : null,
    heavySlots: new KeyedSlots(cfg.heavy_reads_per_client),
    refs: [...collectSchemas(routes, opts.schemas).values()],
    ...(opts.tenantScope ? { tenantScope: opts.tenantScope } : {}),
  };
  // Header and body deadlines of seconds, checked every second (Node's defaults: 60 s, 300 s, checked every 30 s).
  const httpServer = http.createServer({
    headersTimeout: cfg.headers_timeout_s * 1000, requestTimeout: cfg.request_timeout_s * 1000, connectionsCheckingInterval: 1000,
  });
  limitConnections(httpServer, { maxPerIp: cfg.max_connections_per_ip, exempt: deps.trustProxy });
  dispatch(httpServer, routes.map((r) => ({ method: r.method, path: r.path, handle: routeHandler(r, deps) })), {
    error: (err, req, res) => fail(res, err, opts.log, `${req.method} ${req.path}`),
    noMatch: (req, res, allow) => {
      const { ip } = begin(req, res, opts.metrics, 'unmatched', deps.trustProxy);
      try {
        checkAllowlist(deps.allowlist, ip, req.path);
        rateLimit(deps, ip, undefined);
        if (allow.length === 0) throw notFound('Not Found');
        throw new HttpError(405, 'Method Not Allowed', {}, { allow: allow.join(', ') });
      } catch (err) {
        fail(res, err, opts.log, `${req.method} ${req.path}`);
      }
    },
  });
  return {
    server: httpServer,
    openapi,
    metrics: opts.metrics,
    listen: (port, host) => listen(httpServer, port, host),
    close: (graceMs) => closeGracefully(httpServer, graceMs),
  };
}
