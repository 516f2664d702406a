// Browser logins under way: what the callback must find again (state, nonce, PKCE verifier, the
// browser that started it), each valid for 10 minutes and usable once.
import type { Clock } from '../../lib/clock.ts';
import { tooMany } from '../../lib/http-error.ts';

export const LOGIN_TTL_MS = 600_000;
const MAX_PENDING = 10_000;

/** One login started at GET /auth/login. */
export interface PendingLogin {
  provider: 'oidc' | 'saml';
  /** Value of the HttpOnly `svc_login` cookie of the browser that started it. */
  binding: string;
  /** Where to send the browser once signed in (a local path). */
  next: string;
  nonce?: string;
  codeVerifier?: string;
  createdAt: number;
}

/** The pending logins, keyed by OIDC `state` or SAML request id. */
export class PendingLogins {
  private map = new Map<string, PendingLogin>();
  constructor(private readonly clock: Clock) {}

  /** Remember a login under `key`; 429 when too many are open (someone hammering /auth/login). */
  put(key: string, login: Omit<PendingLogin, 'createdAt'>): void {
    const now = this.clock.now();
    if (this.map.size >= MAX_PENDING) this.prune(now);
    if (this.map.size >= MAX_PENDING) throw tooMany('Too many logins in progress; try again later', 60);
    this.map.set(key, { ...login, createdAt: now });
  }

  /** Take the login of `key` out (single use); undefined when unknown or older than 10 minutes. */
  take(key: string): PendingLogin | undefined {
    const login = this.map.get(key);
    this.map.delete(key);
    if (!login || this.clock.now() - login.createdAt >= LOGIN_TTL_MS) return undefined;
    return login;
  }

  get size(): number {
    return this.map.size;
  }

  private prune(now: number): void {
    for (const [k, v] of this.map) if (now - v.createdAt >= LOGIN_TTL_MS) this.map.delete(k);
  }
}

/** A redirect target after login: only a local absolute path (never `//host` or a URL), else the default. */
export function safeNext(next: string | undefined, fallback: string): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\r\n]/.test(next)) return fallback;
  return next;
}
