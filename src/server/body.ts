import type { IncomingMessage } from 'node:http';
import { isUtf8 } from 'node:buffer';
import { HttpError } from '../lib/http-error.ts';
import { ValidationFailed } from './validate.ts';

/** Deepest JSON nesting a body may have; deeper bodies answer 422 before any parse. */
export const MAX_JSON_DEPTH = 64;

/** The body's media type without parameters, lower-cased ('' when absent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** True when the request carries no body bytes at all. */
export function hasNoBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  if (len !== undefined) return Number(len) === 0;
  return req.headers['transfer-encoding'] === undefined;
}

const tooLarge = (limit: number) => new HttpError(413, `Request body exceeds ${limit} bytes`, {}, { connection: 'close' });

/**
 * Collect the body up to `limit` bytes. Over the limit (declared or streamed) → 413; the rest of the
 * upload is not read: the socket is closed once the 413 has been written (connection: close).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) { cleanup(); req.pause(); reject(tooLarge(limit)); return; }
      chunks.push(c);
    };
    const onEnd = () => { cleanup(); resolve(Buffer.concat(chunks, size)); };
    const onError = (e: Error) => { cleanup(); reject(e); };
    // A client that hangs up mid-upload must not leave this promise (and its chunks) pending forever.
    const onClose = () => { if (!req.complete) onError(new HttpError(400, 'Client closed the request')); };
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

const invalid = (pos: number, msg = 'JSON decode error') =>
  new ValidationFailed([{ type: 'json_invalid', loc: ['body', pos], msg }]);

/** Byte offset of the first invalid UTF-8 sequence (re-encoding the lossy decode differs there first). */
function firstBadByte(buf: Buffer): number {
  const round = Buffer.from(buf.toString('utf8'), 'utf8');
  let i = 0;
  while (i < buf.length && buf[i] === round[i]) i++;
  return i;
}

/** Position of the first point where nesting exceeds `max`, or -1; strings are skipped. */
export function depthExceeded(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0, inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inStr = false;
    } else if (c === 34) inStr = true;
    else if (c === 91 || c === 123) { if (++depth > max) return i; }
    else if (c === 93 || c === 125) depth--;
  }
  return -1;
}

// V8 names the position for most syntax errors; "unexpected end" means the end of the text.
function errorPosition(message: string, length: number): number {
  const m = /at position (\d+)/.exec(message);
  if (m) return Number(m[1]);
  return /end of JSON input/.test(message) ? length : 0;
}

/** Decode a JSON body: invalid UTF-8, nesting beyond 64 levels or a syntax error → 422 json_invalid. */
export function parseJsonBody(buf: Buffer): unknown {
  if (!isUtf8(buf)) throw invalid(firstBadByte(buf), 'Invalid UTF-8 in JSON body');
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const deep = depthExceeded(text);
  if (deep >= 0) throw invalid(deep, `JSON nesting deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalid(errorPosition((e as Error).message, text.length));
  }
}

/** Decode an application/x-www-form-urlencoded body into an object (a repeated key becomes an array). */
export function parseFormBody(buf: Buffer): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(buf.toString('utf8'))) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
