import type { ServerResponse } from 'node:http';
import { DomainError } from '../lib/domain-error.ts';
import { HttpError } from '../lib/http-error.ts';
import { jsonText } from '../lib/json-text.ts';
import { StorageUnavailable, VersionConflict } from '../store/types.ts';
import { domainResponse } from './errors.ts';
import { ValidationFailed } from './validate.ts';

/** A response decided from a value or an error, before it is written. */
export interface Outgoing {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Write a JSON response (or an empty one for 204/304/HEAD). Headers already sent → nothing to do. */
export function sendJson(res: ServerResponse, out: Outgoing): void {
  if (res.headersSent) { res.end(); return; }
  res.statusCode = out.status;
  for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
  if (out.body === undefined || out.status === 204 || out.status === 304) { res.end(); return; }
  const text = jsonText(out.body);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Map a thrown value to a response. Known errors carry their status; anything else is a 500 whose
 * message is never sent (`internal: true` tells the caller to log it with the stack).
 */
export function errorResponse(err: unknown): Outgoing & { internal?: true } {
  if (err instanceof HttpError) return { status: err.status, body: err.body(), headers: err.headers };
  const domain = err instanceof DomainError ? domainResponse(err) : undefined;
  if (domain) return domain;
  if (err instanceof ValidationFailed) return { status: 422, body: { detail: err.issues } };
  if (err instanceof VersionConflict) {
    return { status: 409, body: { detail: err.message, current_version: err.current.version } };
  }
  if (err instanceof StorageUnavailable) return { status: 503, body: { detail: `storage unavailable: ${err.code}` } };
  return { status: 500, body: { detail: 'internal error' }, internal: true };
}
