import { HttpError } from '../lib/http-error.ts';

/** A response decided before it is written (structurally the server's `Outgoing`). */
export interface SiteOutgoing {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The validation issues of a 422 body (`{loc, msg, type}`), as the server produces them. */
interface Issue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** SCREAMING_SNAKE code of a status when the route did not name one. */
const CODES: Record<number, string> = {
  400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 429: 'RATE_LIMITED', 500: 'INTERNAL_ERROR',
  502: 'UPSTREAM_FAILED', 503: 'TEMPORARILY_UNAVAILABLE',
};

/**
 * An error in the website envelope `{ok:false, error:{code, message[, details]}}`; `detail` (the
 * message) is kept too, since every error body of the interface has one.
 */
export function siteError(status: number, code: string, message: string, opts: { details?: unknown[]; headers?: Record<string, string> } = {}): HttpError {
  const error = { code, message, ...(opts.details ? { details: opts.details } : {}) };
  return new HttpError(status, message, { ok: false, error }, opts.headers ?? {});
}

/** 429 in the envelope with Retry-After. */
export const rateLimited = (retryAfterSec: number) =>
  siteError(429, 'RATE_LIMITED', `Too many requests; retry in ${retryAfterSec} s`, { headers: { 'retry-after': String(retryAfterSec) } });

/** The model endpoint is not configured. */
export const notConfigured = (what: string) => siteError(503, 'NOT_CONFIGURED', `${what} is not configured`);

const isIssues = (v: unknown): v is Issue[] => Array.isArray(v) && v.every((i) => typeof i === 'object' && i !== null && 'loc' in i);

/**
 * Bring any error response into the envelope: validation (422) becomes 400 INVALID_PARAMS with the
 * issues as `details`; a body already in the envelope (or the flat notify shape) is kept.
 */
export function toEnvelope(out: SiteOutgoing): SiteOutgoing {
  const body = (out.body ?? {}) as { detail?: unknown; ok?: unknown };
  if (body.ok === false) return out;
  if (out.status === 422 && isIssues(body.detail)) {
    const message = body.detail.some((i) => i.type === 'json_invalid') ? 'Body is not valid JSON' : 'Invalid parameters';
    return { ...out, status: 400, body: { ok: false, detail: message, error: { code: 'INVALID_PARAMS', message, details: body.detail } } };
  }
  const message = typeof body.detail === 'string' ? body.detail : 'error';
  return { ...out, body: { ok: false, detail: message, error: { code: CODES[out.status] ?? 'ERROR', message } } };
}

/** Notify's flat error shape `{ok:false, error:"…"}` (the original's legacy shape), with `detail`. */
export function flatError(status: number, error: string, detail: string, headers: Record<string, string> = {}): HttpError {
  return new HttpError(status, detail, { ok: false, error }, headers);
}

/** Notify's shaping: a missing or bad email field → invalid_email, any other input error → bad_request, 5xx → unexpected. */
export function toFlat(out: SiteOutgoing): SiteOutgoing {
  const body = (out.body ?? {}) as { detail?: unknown; ok?: unknown };
  if (body.ok === false) return out;
  const headers = out.headers ?? {};
  if (out.status === 422 && isIssues(body.detail)) {
    const email = body.detail.some((i) => i.loc[0] === 'body' && i.loc[1] === 'email');
    const err = email ? flatError(400, 'invalid_email', 'Invalid email address') : flatError(400, 'bad_request', 'Body must be a JSON object with an email');
    return { status: 400, body: err.body(), headers };
  }
  if (out.status >= 500) return { status: out.status, body: { ok: false, error: 'unexpected', detail: 'internal error' }, headers };
  const detail = typeof body.detail === 'string' ? body.detail : 'bad request';
  return { status: out.status === 413 || out.status === 415 ? 400 : out.status, body: { ok: false, error: 'bad_request', detail }, headers };
}
