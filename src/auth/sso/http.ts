// What the /auth routes share: the service, pending logins, cookies and the public base URL.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../lib/clock.ts';
import { RAW } from '../../lib/route.ts';
import { LOGIN_COOKIE, readCookie, SESSION_COOKIE, setCookie } from './cookie.ts';
import { LOGIN_TTL_MS, PendingLogins } from './logins.ts';
import type { SsoService } from './service.ts';

/** Where a browser lands after signing in when it asked for nothing else. */
export const LANDING = '/auth/device';

/** The HTTP side of SSO for one server. */
export class SsoHttp {
  readonly pending: PendingLogins;
  readonly secure: boolean;
  constructor(readonly sso: SsoService, clock: Clock, readonly publicUrl?: string) {
    this.pending = new PendingLogins(clock);
    const cfg = sso.deps.config;
    this.secure = (publicUrl ?? cfg.oidc?.redirect_uri ?? cfg.saml?.sp_acs_url ?? '').startsWith('https:');
  }

  /** The base URL people use: `public_url`, else the Host the request came to. */
  baseUrl(req: IncomingMessage): string {
    if (this.publicUrl) return this.publicUrl.replace(/\/+$/, '');
    const host = req.headers.host ?? '';
    return `http://${/^[\w.:[\]-]{1,255}$/.test(host) ? host : '127.0.0.1'}`;
  }

  /** This browser's login binding: the one it already has, else a new one. */
  binding(req: IncomingMessage): string {
    const have = readCookie(req.headers.cookie, LOGIN_COOKIE);
    return have && /^[\w-]{43}$/.test(have) ? have : randomBytes(32).toString('base64url');
  }

  loginCookie(binding: string): string {
    return setCookie(LOGIN_COOKIE, binding, { maxAgeS: LOGIN_TTL_MS / 1000, secure: this.secure, path: '/auth' });
  }

  sessionCookie(token: string): string {
    return setCookie(SESSION_COOKIE, token, { maxAgeS: this.sso.sessions.ttlSeconds, secure: this.secure });
  }

  clearSession(): string {
    return setCookie(SESSION_COOKIE, '', { maxAgeS: 0, secure: this.secure });
  }

  /** The session cookie's principal for a public page, or undefined (absent, expired, revoked). */
  async signedIn(req: IncomingMessage) {
    const token = readCookie(req.headers.cookie, SESSION_COOKIE);
    return token ? this.sso.principal(token).catch(() => undefined) : undefined;
  }
}

/** Answer a redirect (with cookies) and nothing else. */
export function redirect(res: ServerResponse, status: 302 | 303, location: string, cookies: string[] = []): typeof RAW {
  res.writeHead(status, { location, 'cache-control': 'no-store', 'content-length': 0, ...(cookies.length ? { 'set-cookie': cookies } : {}) }).end();
  return RAW;
}

/** The raw query string of a request URL ('' when none), as the IdP sent it. */
export function rawQuery(url: string | undefined): string {
  const i = (url ?? '').indexOf('?');
  return i < 0 ? '' : (url ?? '').slice(i);
}
