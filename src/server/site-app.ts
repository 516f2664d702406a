import * as http from 'node:http';
import { HttpError, notFound } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Principal } from '../lib/route.ts';
import { toEnvelope, type SiteRoute } from '../site/index.ts';
import { sortRoutes } from './app.ts';
import { requestClientIp, type TrustedProxies } from './client-ip.ts';
import { closeGracefully, dispatch, listen, type RouteRequest } from './dispatch.ts';
import { createMetrics, type HttpMetrics } from './metrics.ts';
import { answer, begin, prepare, readRequestBody } from './pipeline.ts';
import { errorResponse, sendJson } from './respond.ts';
import { ensureFormats, pickQuery } from './validate.ts';
import { withWho } from './who.ts';

export interface SiteServerOptions {
  routes: SiteRoute[];
  log: Logger;
  /** Proxies whose X-Forwarded-For names the client; none = the socket address is the client. */
  trusted: TrustedProxies;
  /** Body cap of routes that do not set their own (default 64 KiB). */
  bodyLimit?: number;
  metrics?: HttpMetrics;
}

export interface SiteServer {
  server: http.Server;
  listen(port: number, host: string): Promise<{ port: number; host: string }>;
  /** Stop accepting, let in-flight requests finish for up to `graceMs`, then cut the rest. */
  close(graceMs?: number): Promise<void>;
}

const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', role: 'viewer', tenant: null, actor: 'anonymous' });

/** One site route's handler: client address, guard, body, validation, handler, shaped errors. */
function siteHandler(route: SiteRoute, opts: Required<Omit<SiteServerOptions, 'routes'>>) {
  const p = prepare(route, []);
  const shape = route.shapeError ?? toEnvelope;
  return async (req: RouteRequest, res: http.ServerResponse) => {
    const path = req.path;
    const { requestId } = begin(req, res, opts.metrics, route.path);
    const ip = requestClientIp(req, opts.trusted);
    try {
      route.guard?.(ip);
      const rawParams = req.params;
      const params = p.paramsV ? p.paramsV.parse(rawParams, 'path', true) : rawParams;
      const query = p.queryV ? p.queryV.parse(pickQuery(p.queryV.schema, req.query), 'query', true) : req.query;
      const { body, raw } = await readRequestBody(p, req, route.bodyLimit ?? opts.bodyLimit, rawParams);
      const result = await route.handler(withWho({ req, res, params, query, body, principal: ANONYMOUS, requestId, ip, ...(raw ? { raw } : {}) }, () => ({ actor: ANONYMOUS.actor, tenant: 'default' })));
      answer(res, result, p.status);
    } catch (err) {
      const out = errorResponse(err);
      if (out.internal) opts.log.error(`[${requestId}] ${req.method} ${path} failed`, err);
      if (res.headersSent) { res.end(); return; }
      sendJson(res, shape(out));
    }
  };
}

/** The website host's HTTP server: only its own routes, errors in the site envelope, 405 with Allow. */
export function createSiteServer(opts: SiteServerOptions): SiteServer {
  ensureFormats();
  const o = { log: opts.log, trusted: opts.trusted, bodyLimit: opts.bodyLimit ?? 64 * 1024, metrics: opts.metrics ?? createMetrics({ defaults: false }) };
  const server = http.createServer();
  dispatch(server, (sortRoutes(opts.routes) as SiteRoute[]).map((r) => ({ method: r.method, path: r.path, handle: siteHandler(r, o) })), {
    error: (err, _req, res) => sendJson(res, toEnvelope(errorResponse(err))),
    noMatch: (req, res, allow) => {
      begin(req, res, o.metrics, 'unmatched');
      const err = allow.length ? new HttpError(405, `use ${allow.join(', ')}`, {}, { allow: allow.join(', ') }) : notFound('Not Found');
      sendJson(res, toEnvelope(errorResponse(err)));
    },
  });
  return {
    server,
    listen: (port, host) => listen(server, port, host),
    close: (graceMs) => closeGracefully(server, graceMs),
  };
}
