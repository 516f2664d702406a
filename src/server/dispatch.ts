// The HTTP server's request loop shared by the task server and the website host: the URL split into
// path and query, the route found (router.ts), its handler run; no route → `noMatch` with the methods the
// path has; a throw that escaped a handler → `error`. Also listening and a graceful close.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQuery } from 'node:querystring';
import { createRouter } from './router.ts';

/** A request as a handler sees it: `path` without the query string, `query` parsed (a repeated key → array), `params` decoded. */
export type RouteRequest = IncomingMessage & { path: string; query: Record<string, string | string[]>; params: Record<string, string> };
export type Handle = (req: RouteRequest, res: ServerResponse) => unknown;

export interface DispatchHooks {
  /** No route for this method and path; `allow`: the methods that have one (empty: none). */
  noMatch(req: RouteRequest, res: ServerResponse, allow: string[]): void;
  /** A handler threw or rejected (handlers answer their own errors; this is the last resort). */
  error(err: unknown, req: RouteRequest, res: ServerResponse): void;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
// A 405's Allow list in this order; HEAD wherever GET is (it is answered as GET).
const allowed = (have: string[]) => METHODS.filter((m) => have.includes(m) || (m === 'HEAD' && have.includes('GET')));

/** Serve `routes` (in precedence order for equal patterns) on `server`. */
export function dispatch(server: Server, routes: readonly { method: string; path: string; handle: Handle }[], hooks: DispatchHooks): void {
  const router = createRouter(routes.map((r) => ({ method: r.method, path: r.path, value: r.handle })));
  server.on('request', (incoming: IncomingMessage, res: ServerResponse) => {
    const req = incoming as RouteRequest;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const hash = url.indexOf('#');
    const end = hash < 0 ? url.length : hash;
    req.path = q < 0 || q > end ? url.slice(0, end) || '/' : url.slice(0, q) || '/';
    req.query = q < 0 || q > end || q + 1 >= end ? {} : (parseQuery(url.slice(q + 1, end)) as Record<string, string | string[]>);
    const found = router.find(req.method ?? 'GET', req.path);
    req.params = found?.params ?? {};
    try {
      const out = found ? found.value(req, res) : hooks.noMatch(req, res, allowed(router.methods(req.path)));
      if (out instanceof Promise) out.catch((err: unknown) => hooks.error(err, req, res));
    } catch (err) {
      hooks.error(err, req, res);
    }
  });
}

/** Listen on `port` and `host`; the address bound. */
export function listen(server: Server, port: number, host: string): Promise<{ port: number; host: string }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      resolve({ port: a.port, host: a.address });
    });
  });
}

/** Stop accepting, let in-flight requests finish for up to `graceMs`, then cut the rest. */
export function closeGracefully(server: Server, graceMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) { resolve(); return; }
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => { clearTimeout(cut); resolve(); });
    server.closeIdleConnections();
  });
}
