// Starts a real svc HTTP server on port 0 over a temp `.sdd` tree, for the server and auth tests.
import { createAuthenticator, createTenantGate, type AuthEnv } from '../../src/auth/index.ts';
import { defaultConfig, type Config } from '../../src/config/index.ts';
import { systemClock, type Clock } from '../../src/lib/clock.ts';
import { silentLogger, type Logger } from '../../src/lib/log.ts';
import type { Route } from '../../src/lib/route.ts';
import { createMetrics, createServer, type ServerHooks, type SvcServer } from '../../src/server/index.ts';
import { sddLayout, type SddLayout } from '../../src/store/layout.ts';
import type { TSchema } from '@sinclair/typebox';
import { request } from 'node:http';
import { makeTempDir } from '../helpers/repo.ts';

export interface Harness {
  url: string;
  port: number;
  layout: SddLayout;
  app: SvcServer;
  /** fetch relative to the server, with an optional bearer token. */
  fetch(path: string, init?: RequestInit & { token?: string }): Promise<JsonResponse>;
  close(): Promise<void>;
}

/** A fetch Response whose json() is loosely typed, for terse assertions. */
export type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface HarnessOptions {
  routes?: Route[];
  schemas?: TSchema[];
  config?: (c: Config) => void;
  auth?: Partial<AuthEnv>;
  hooks?: ServerHooks;
  log?: Logger;
  clock?: Clock;
  allowLoopback?: boolean;
  /** The tenant scope of `ctx.who` (default: the tree's `.sdd/tenants.json`, as `svc up`). */
  tenantScope?: (bound: string | null, header: string | undefined, named: string | undefined) => string;
  /** Reuse an existing tree (else a new temp dir). */
  root?: string;
}

/** A running server; `auth` defaults to enabled with the env token 'test-admin-token'. */
export async function startServer(opts: HarnessOptions = {}): Promise<Harness> {
  const tmp = opts.root ? null : makeTempDir('svc-server-');
  const layout = sddLayout(opts.root ?? tmp!.dir);
  const config = defaultConfig();
  opts.config?.(config);
  const log = opts.log ?? silentLogger();
  const clock = opts.clock ?? systemClock;
  const authenticator = createAuthenticator({ layout, clock, log, env: { authToken: 'test-admin-token', disabled: false, ...opts.auth } });
  let app: SvcServer;
  try {
    app = createServer({
      routes: opts.routes ?? [], log, config, authenticator, metrics: createMetrics({ defaults: false }), version: '9.9.9', clock,
      ...(opts.hooks ? { hooks: opts.hooks } : {}), ...(opts.schemas ? { schemas: opts.schemas } : {}),
      ...(opts.allowLoopback === undefined ? {} : { allowLoopback: opts.allowLoopback }),
      tenantScope: opts.tenantScope ?? createTenantGate({ layout, log, defaultMax: 1000 }).scope,
    });
  } catch (e) {
    tmp?.cleanup();
    throw e;
  }
  const { port } = await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  return {
    url, port, layout, app,
    fetch: (path, init = {}) => {
      const { token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set('authorization', `Bearer ${token}`);
      return fetch(url + path, { ...rest, headers }) as Promise<JsonResponse>;
    },
    close: async () => { await app.close(100); tmp?.cleanup(); },
  };
}

export const ADMIN = 'test-admin-token';

/** A request with node:http (for chunked uploads and byte-exact bodies); resolves status, headers, body text. */
export function rawRequest(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; chunks?: Buffer[] }):
  Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path, headers: opts.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    // The server may answer (413) and close before the whole upload is written: that is expected.
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
    const chunks = opts.chunks ?? [];
    const writeNext = (i: number): void => {
      if (i >= chunks.length) { req.end(); return; }
      if (req.destroyed) return;
      req.write(chunks[i]!, () => setImmediate(writeNext, i + 1));
    };
    writeNext(0);
  });
}
