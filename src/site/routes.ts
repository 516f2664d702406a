import type { IncomingMessage } from 'node:http';
import { Type } from '../lib/typebox.ts';
import type { HttpError } from '../lib/http-error.ts';
import { reply } from '../lib/route.ts';
import { CSP_BODY_LIMIT, CSP_TYPES, parseCspReport } from './csp.ts';
import { defineSiteRoute as route, type SiteDeps, type SiteRoute } from './deps.ts';
import { flatError, siteError, toFlat } from './errors.ts';
import { checkTrigger, submitSitemap } from './indexnow.ts';
import { clientKey, type WindowLimiter } from './limiter.ts';
import { normalizeEmail } from './notify.ts';

const Str = Type.String();
const Envelope = Type.Object({ ok: Type.Boolean(), error: Type.Object({ code: Str, message: Str }), detail: Str }, { additionalProperties: true });
const Flat = Type.Object({ ok: Type.Literal(false), error: Str, detail: Str });
const NotifyBody = Type.Object({ email: Type.String({ maxLength: 320 }) });

/** A guard that counts the client against `limiter` and throws `refuse(retryAfterSec)` when over. */
export function limitBy(limiter: WindowLimiter, refuse: (retryAfterSec: number) => HttpError) {
  return (ip: string) => {
    const d = limiter.check(clientKey(ip));
    if (!d.allowed) throw refuse(d.retryAfterSec ?? 1);
  };
}

const mediaType = (req: IncomingMessage) => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
const NO_STORE = { 'cache-control': 'no-store' };

/** GET /api/health, POST /api/csp-report, GET and POST /api/notify, POST /api/indexnow. */
export function siteRoutes(deps: SiteDeps): SiteRoute[] {
  const csp = deps.log.withTag('csp-report');
  return [
    route({
      method: 'GET', path: '/api/health', operationId: 'site_health', summary: 'Liveness of the website host', tags: ['site'], access: 'public',
      responses: { 200: { description: 'Alive', schema: Type.Object({ status: Str, sha: Type.Union([Str, Type.Null()]), ts: Str, version: Str }) } },
      handler: () => ({ status: 'ok', sha: deps.sha, ts: deps.clock.iso(), version: deps.version }),
    }),
    route({
      method: 'POST', path: '/api/csp-report', operationId: 'site_csp_report', summary: 'Receive CSP violation reports (always 204)', tags: ['site'], access: 'public',
      rawBody: true, bodyLimit: CSP_BODY_LIMIT,
      guard: limitBy(deps.limiters.csp, () => siteError(429, 'RATE_LIMITED', 'dropped')),
      // Every refusal is silent: the browser never retries and learns nothing.
      shapeError: (out) => ({ status: 204, headers: { ...NO_STORE, ...(out.headers?.connection ? { connection: 'close' } : {}) } }),
      responses: { 204: { description: 'Received, dropped or refused: always empty' } },
      handler: ({ req, body }) => {
        if ((CSP_TYPES as readonly string[]).includes(mediaType(req))) {
          for (const v of parseCspReport(body as Buffer)) csp.warn(`[csp-report] ${JSON.stringify(v)}`);
        }
        return reply(204, undefined, NO_STORE);
      },
    }),
    route({
      method: 'GET', path: '/api/notify', operationId: 'site_notify_info', summary: 'Which service this is', tags: ['site'], access: 'public',
      responses: { 200: { description: 'Service name', schema: Type.Object({ ok: Type.Boolean(), service: Str }) } },
      handler: () => ({ ok: true, service: 'notify' }),
    }),
    route({
      method: 'POST', path: '/api/notify', operationId: 'site_notify', summary: 'Subscribe an email address (5 per 10 minutes per IP)', tags: ['site'], access: 'public',
      body: NotifyBody, shapeError: toFlat,
      guard: limitBy(deps.limiters.notify, (s) => flatError(429, 'rate_limited', `Too many requests; retry in ${s} s`, { 'retry-after': String(s) })),
      responses: {
        200: { description: 'subscribed, already_subscribed, or noop (no mail server configured; the address is stored)', schema: Type.Object({ ok: Type.Boolean(), status: Str }) },
        400: { description: 'invalid_email or bad_request', schema: Flat }, 429: { description: 'rate_limited', schema: Flat },
        502: { description: 'upstream: the mail server refused', schema: Flat },
      },
      handler: async ({ body }) => {
        const email = normalizeEmail(body.email);
        if (!email) throw flatError(400, 'invalid_email', 'Invalid email address');
        return { ok: true, status: await deps.subscribers.subscribe(email) };
      },
    }),
    route({
      method: 'POST', path: '/api/indexnow', operationId: 'site_indexnow', summary: "Submit the sitemap's URLs to IndexNow (bearer)", tags: ['site'], access: 'public',
      responses: {
        200: { description: 'Submitted', schema: Type.Object({ ok: Type.Boolean(), data: Type.Object({ submitted: Type.Integer(), results: Type.Array(Type.Any()) }) }) },
        401: { description: 'Missing or wrong bearer', schema: Envelope }, 502: { description: 'Sitemap or IndexNow failed', schema: Envelope },
        503: { description: 'Not configured', schema: Envelope },
      },
      handler: async ({ req }) => {
        const denied = checkTrigger(req.headers.authorization, deps.indexnow);
        if (denied) throw denied;
        return { ok: true, data: await submitSitemap(deps.indexnow) };
      },
    }),
  ];
}
