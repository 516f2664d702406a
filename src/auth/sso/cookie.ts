// Cookies of the browser sign-in: the session (`svc_session`) and the login binding (`svc_login`).
import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'svc_session';
export const LOGIN_COOKIE = 'svc_login';

/** One cookie's value from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      return v ? v : undefined;
    }
  }
  return undefined;
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Secure behind https; `maxAgeS` 0 deletes it. */
export function setCookie(name: string, value: string, o: { maxAgeS: number; secure: boolean; path?: string }): string {
  return [`${name}=${value}`, `Path=${o.path ?? '/'}`, `Max-Age=${o.maxAgeS}`, 'HttpOnly', 'SameSite=Lax', ...(o.secure ? ['Secure'] : [])].join('; ');
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The session cookie, when it may stand for the caller: always on safe methods; on writes only from
 * the server's own pages (Sec-Fetch-Site same-origin, or an Origin equal to the Host), so another site
 * (even another port of the same host, which SameSite counts as the same site) cannot write with it.
 */
export function sessionCookieOf(req: IncomingMessage): string | undefined {
  const value = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (!value || SAFE.has(req.method ?? 'GET')) return value;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' ? value : undefined;
  const origin = req.headers.origin;
  if (origin === undefined) return value;
  try {
    return new URL(origin).host === req.headers.host ? value : undefined;
  } catch {
    return undefined;
  }
}
