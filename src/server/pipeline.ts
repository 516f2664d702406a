import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TSchema } from '../lib/typebox.ts';
import { accessDenied } from '../auth/roles.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { sessionCookieOf } from '../auth/sso/cookie.ts';
import { forbidden, HttpError, tooMany } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { isReply, RAW, type Principal, type Route } from '../lib/route.ts';
import type { KeyedSlots } from '../lib/slots.ts';
import { allowlistExempt, clientAddress, isLoopback, type Allowlist } from './allowlist.ts';
import { hasNoBody, mediaType, parseFormBody, parseJsonBody, readBody } from './body.ts';
import type { HttpMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import { errorResponse, sendJson, type Outgoing } from './respond.ts';
import { compileValidator, pickQuery, ValidationFailed, type Validator } from './validate.ts';
import type { RouteRequest } from './dispatch.ts';
import { noTenants, resolveWho, withWho, type TenantScope } from './who.ts';

/** What every request handler shares. */
export interface PipelineDeps {
  authenticator: Authenticator;
  allowlist: Allowlist;
  /** null = rate limiting off. */
  limiter: RateLimiter | null;
  /** Loopback clients skip the rate limit (rate_limit.exempt_loopback, else server.exempt_loopback). */
  exemptLoopback: boolean;
  /** `server.trust_proxy`: peers whose X-Forwarded-For names the client; null = none. */
  trustProxy: ((ip: string) => boolean) | null;
  /** Slots of `heavy` routes per client (token, else address): the rest wait their turn. */
  heavySlots: KeyedSlots;
  bodyLimit: number;
  log: Logger;
  metrics: HttpMetrics;
  refs: TSchema[];
  /** The tenant scope of a request (the tenant registry's rules); default: the same rules without a registry. */
  tenantScope?: TenantScope;
}

const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', role: 'viewer', tenant: null, actor: 'anonymous' });
const HMAC: Principal = Object.freeze({ kind: 'hmac', role: 'viewer', tenant: null, actor: 'hmac' });
const REQUEST_ID = /^[\w.:@/-]{1,128}$/;

// Request ids in the UUID shape: a random UUID's first 24 characters, renewed every 4,096 ids, and a counter as
// the last 12 hex digits. Unique in a process and across restarts like randomUUID()'s, without its ~40
// string concatenations per request (half a kilobyte of garbage each).
let idPrefix = '';
let idCount = 4096;
function newRequestId(): string {
  if (idCount === 4096) { idPrefix = randomUUID().slice(0, 24); idCount = 0; }
  return idPrefix + (idCount++).toString(16).padStart(12, '0');
}

/** Per-request facts established before routing: id, client address (trusted proxies resolved), metrics on completion. */
export function begin(req: IncomingMessage, res: ServerResponse, metrics: HttpMetrics, routeLabel: string, trustProxy: PipelineDeps['trustProxy'] = null) {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
  res.setHeader('x-request-id', requestId);
  const ip = clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], trustProxy);
  const stop = metrics.start();
  res.once('close', () => stop(req.method ?? 'GET', routeLabel, res.statusCode));
  return { requestId, ip };
}

/** 403 unless the client address is allowed (health, docs and openapi are always reachable). */
export function checkAllowlist(allowlist: Allowlist, ip: string, path: string): void {
  if (!allowlistExempt(path) && !allowlist.allows(ip)) throw forbidden(`IP ${ip} not in allowlist`);
}

// A refused upload declared at most this large is read to its end and dropped after the answer.
const LINGER_BYTES = 4 * 1024 * 1024;
// ... when it arrives within this long; a client that stops sending gets the answer and a closed connection.
const LINGER_MS = 5000;

/**
 * Send the response for a thrown value; unknown errors are logged with the request id, never sent.
 * A request whose body was not read to its end: a remainder declared up to 4 MiB is read and dropped
 * first, then the answer goes (a server that closes on unread bytes resets the connection, and the client
 * loses the answer: EPIPE instead of a 413); a larger or undeclared one is cut off with `connection: close`
 * (a refused 300 MB body costs nothing).
 */
export function fail(res: ServerResponse, err: unknown, log: Logger, where: string): void {
  const out = errorResponse(err);
  if (out.internal) log.error(`${where} failed`, err);
  if (res.headersSent) { res.end(); return; }
  const req = res.req;
  if (!req || req.complete) { sendJson(res, out); return; }
  if (!(Number(req.headers['content-length'] ?? NaN) <= LINGER_BYTES)) {
    sendJson(res, { ...out, headers: { ...out.headers, connection: 'close' } });
    return;
  }
  const { connection: _cut, ...keep } = out.headers ?? {};
  let sent = false;
  const send = (close: boolean) => {
    if (sent) return;
    sent = true;
    clearTimeout(timer);
    sendJson(res, { ...out, headers: close ? { ...keep, connection: 'close' } : keep });
  };
  const timer = setTimeout(() => send(true), LINGER_MS);
  req.removeAllListeners('data');
  req.on('end', () => send(false)).on('close', () => send(true)).resume();
}

/** The route's success status for a plain return value: its lowest documented 2xx, else 200. */
export function defaultStatus(route: Route): number {
  const ok = Object.keys(route.responses).map(Number).filter((s) => s >= 200 && s < 300).sort((a, b) => a - b);
  return ok[0] ?? 200;
}

/** A route compiled once at mount time. */
export interface Prepared {
  route: Route;
  paramsV?: Validator;
  queryV?: Validator;
  bodyV?: Validator;
  status: number;
}

/** Compile a route's matchers and validators once, at mount time. */
export function prepare(route: Route, refs: TSchema[]): Prepared {
  return {
    route,
    ...(route.params ? { paramsV: compileValidator(route.params, refs) } : {}),
    ...(route.query ? { queryV: compileValidator(route.query, refs) } : {}),
    ...(route.body ? { bodyV: compileValidator(route.body, refs) } : {}),
    status: defaultStatus(route),
  };
}

// Who is calling: a failed authentication is kept, not thrown, so the rate limit still counts it by IP.
// A public route is anonymous unless a valid token comes with it (then e.g. /health shows its details); a bad token is ignored there.
async function identify(route: Route, req: IncomingMessage, auth: Authenticator): Promise<{ principal?: Principal; error?: unknown }> {
  if (route.access === 'public') {
    if (auth.disabled) return { principal: await auth.resolve(undefined) };
    if (!req.headers.authorization) return { principal: ANONYMOUS };
    return { principal: await auth.resolve(req.headers.authorization).catch(() => ANONYMOUS) };
  }
  if (route.access === 'hmac') return { principal: HMAC };
  try {
    return { principal: await auth.resolve(req.headers.authorization, sessionCookieOf(req)) };
  } catch (error) {
    return { error };
  }
}

/** Who a client is for limits: its token, else its address. */
function clientKey(principal: Principal | undefined, ip: string): string {
  const byToken = principal && (principal.kind === 'token' || principal.kind === 'env' || principal.kind === 'admin-file' || principal.kind === 'session' || principal.kind === 'node');
  return byToken ? `actor:${principal.actor}` : `ip:${ip}`;
}

/** 429 when the client (token actor, else IP) is over its rate; loopback may be exempt. */
export function rateLimit(deps: PipelineDeps, ip: string, principal: Principal | undefined): void {
  if (!deps.limiter || (deps.exemptLoopback && isLoopback(ip))) return;
  const wait = deps.limiter.check(clientKey(principal, ip));
  if (wait !== null) throw tooMany('Rate limit exceeded', wait);
}

const UNSUPPORTED = new HttpError(415, 'Content-Type must be application/json');

// Body by the route's declaration: raw bytes (verified, then parsed when `body` is declared), JSON (or
// form) validated against `body`, or nothing.
export async function readRequestBody(p: Prepared, req: IncomingMessage, limit: number, params: Record<string, string> = {}): Promise<{ body: unknown; raw?: Buffer }> {
  const { route, bodyV } = p;
  if (route.rawBody) {
    const raw = await readBody(req, limit);
    await route.verify?.({ req, raw, params });
    if (!bodyV) return { body: raw, raw };
    if (raw.length === 0 && route.bodyOptional) return { body: undefined, raw };
    const form = route.form === true && mediaType(req) === 'application/x-www-form-urlencoded';
    return { body: form ? bodyV.parse(parseFormBody(raw), 'body', true) : bodyV.parse(parseJsonBody(raw), 'body'), raw };
  }
  return { body: await parsedBody(p, req, limit) };
}

async function parsedBody(p: Prepared, req: IncomingMessage, limit: number): Promise<unknown> {
  const { route, bodyV } = p;
  if (!bodyV) return undefined;
  if (hasNoBody(req)) {
    if (!route.bodyOptional) throw new ValidationFailed([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    try { return bodyV.parse({}, 'body'); } catch { return undefined; }
  }
  const type = mediaType(req);
  const form = route.form === true && type === 'application/x-www-form-urlencoded';
  if (type !== 'application/json' && !form) throw UNSUPPORTED;
  const buf = await readBody(req, limit);
  if (buf.length === 0 && route.bodyOptional) return undefined;
  return form ? bodyV.parse(parseFormBody(buf), 'body', true) : bodyV.parse(parseJsonBody(buf), 'body');
}

/** The handler of one route: guard, authenticate, validate, call, answer. */
export function routeHandler(route: Route, deps: PipelineDeps) {
  const p = prepare(route, deps.refs);
  return async (req: RouteRequest, res: ServerResponse) => {
    const path = req.path;
    const { requestId, ip } = begin(req, res, deps.metrics, route.path, deps.trustProxy);
    try {
      checkAllowlist(deps.allowlist, ip, path);
      const who = await identify(route, req, deps.authenticator);
      rateLimit(deps, ip, who.principal);
      if (!who.principal) throw who.error;
      const principal = who.principal;
      const rawParams = req.params;
      const denied = accessDenied(principal, route.access, rawParams, route.taskScope, route.nodeScope);
      if (denied) throw denied;
      const params = p.paramsV ? p.paramsV.parse(rawParams, 'path', true) : rawParams;
      const rawQuery = req.query;
      const query = p.queryV ? p.queryV.parse(pickQuery(p.queryV.schema, rawQuery), 'query', true) : rawQuery;
      const { body, raw } = await readRequestBody(p, req, deps.bodyLimit, rawParams);
      // A client's large reads run a few at a time, so one client cannot keep the event loop to itself.
      if (route.heavy) {
        const free = await deps.heavySlots.acquire(clientKey(principal, ip));
        // A client that left while waiting for its turn frees the slot at once.
        if (res.destroyed || res.closed) { free(); return; }
        res.once('close', free);
      }
      const resolve = () => resolveWho(deps.tenantScope ?? noTenants, principal, req, query, route.bodyTenant?.(body));
      const result = await route.handler(withWho({ req, res, params, query, body, principal, requestId, ip, ...(raw ? { raw } : {}) }, resolve));
      answer(res, result, p.status);
    } catch (err) {
      fail(res, challenged(route, req, err), deps.log, `[${requestId}] ${req.method} ${path}`);
    }
  };
}

// A 401 of a route that names its challenge carries it in WWW-Authenticate.
function challenged(route: Route, req: IncomingMessage, err: unknown): unknown {
  if (!route.challenge || !(err instanceof HttpError) || err.status !== 401) return err;
  return new HttpError(401, err.detail, err.extra, { ...err.headers, 'www-authenticate': route.challenge(req) });
}

// Turn a handler's return value into the response (RAW or an already-started response: leave it).
export function answer(res: ServerResponse, result: unknown, status: number): void {
  if (result === RAW) return;
  if (isReply(result)) {
    const out: Outgoing = { status: result.status ?? status, body: result.body };
    if (result.headers) out.headers = result.headers;
    sendJson(res, out);
  } else if (res.headersSent) return;
  else if (result === undefined) sendJson(res, { status: 204 });
  else sendJson(res, { status, body: result });
}
