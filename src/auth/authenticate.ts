import { createHash, timingSafeEqual } from 'node:crypto';
import { fileCache } from '../lib/file-cache.ts';
import type { Clock } from '../lib/clock.ts';
import { unauthorized } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Principal } from '../lib/route.ts';
import type { SddLayout } from '../store/layout.ts';
import { parseTokenFile, tokenState, type TokenRecord } from './tokens.ts';

/** Turns an Authorization header into the caller, or throws 401. */
export interface Authenticator {
  /** True when SERVICE_AUTH_DISABLED is set: every caller is admin. */
  readonly disabled: boolean;
  /** The principal for a header value (`Bearer <token>`), else the session cookie; throws HttpError 401. */
  resolve(authorization: string | undefined, sessionCookie?: string): Promise<Principal>;
}

export interface AuthEnv {
  /** SERVICE_AUTH_TOKEN: accepted as an admin token. */
  authToken?: string;
  /** SERVICE_AUTH_DISABLED=1. */
  disabled: boolean;
}

export const DISABLED_PRINCIPAL: Principal = Object.freeze({ kind: 'disabled', role: 'admin', tenant: null, actor: 'auth-disabled' });
const ENV_PRINCIPAL: Principal = Object.freeze({ kind: 'env', role: 'admin', tenant: null, actor: 'env' });
const FILE_PRINCIPAL: Principal = Object.freeze({ kind: 'admin-file', role: 'admin', tenant: null, actor: 'admin-file' });
const INVALID = 'Invalid or expired authentication token';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

interface Loaded { records: TokenRecord[]; digests: Buffer[] }

/** SSO sign-in sessions (src/auth/sso): a session JWT → its user's principal, or 401. */
export interface SessionResolver {
  principal(token: string): Promise<Principal>;
}

/** Cluster credentials (src/cluster): the raw cluster secret and node JWTs → their principal; undefined for anything else; 401 for a bad node token. */
export interface ClusterResolver {
  principal(token: string): Promise<Principal | undefined>;
}

// Session JWTs have three dot-separated parts; svc tokens (`svc_…`) have none.
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** Bearer authentication against SERVICE_AUTH_TOKEN, `.sdd/secrets/admin.token`, cluster credentials, tokens.json and SSO sessions. */
export function createAuthenticator(deps: { layout: SddLayout; env: AuthEnv; clock: Clock; log: Logger; sessions?: SessionResolver; cluster?: ClusterResolver }): Authenticator {
  const { layout, env, clock, log } = deps;
  if (env.disabled) {
    log.warn('AUTHENTICATION IS DISABLED (SERVICE_AUTH_DISABLED=1): every request is treated as admin. Development only.');
    return { disabled: true, resolve: async () => DISABLED_PRINCIPAL };
  }
  const envDigest = env.authToken ? digest(env.authToken) : null;
  const adminFile = fileCache(layout.adminToken, (t) => (t.trim() ? digest(t.trim()) : null), null,
    (e) => log.error(`cannot read ${layout.adminToken}: ${e.message}`));
  const tokens = fileCache<Loaded>(layout.tokens, (t) => {
    const { tokens: records } = parseTokenFile(t);
    return { records, digests: records.map((r) => Buffer.from(r.hash, 'hex')) };
  }, { records: [], digests: [] }, (e) => log.error(`ignoring invalid ${layout.tokens} (keeping the last good one): ${e.message}`));

  return {
    disabled: false,
    async resolve(authorization, sessionCookie) {
      const sessions = deps.sessions;
      if (authorization === undefined && sessionCookie && sessions) return sessions.principal(sessionCookie);
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
      if (!m) throw unauthorized('Missing or invalid Authorization header');
      const presented = digest(m[1]!);
      if (envDigest && timingSafeEqual(presented, envDigest)) return ENV_PRINCIPAL;
      const fileDigest = adminFile();
      if (fileDigest && timingSafeEqual(presented, fileDigest)) return FILE_PRINCIPAL;
      const node = await deps.cluster?.principal(m[1]!);
      if (node) return node;
      if (sessions && JWT_SHAPE.test(m[1]!)) return sessions.principal(m[1]!);
      const { records, digests } = tokens();
      let match: TokenRecord | undefined;
      // Compare against every record (no early exit) so timing says nothing about which one matched.
      digests.forEach((d, i) => { if (d.length === 32 && timingSafeEqual(presented, d)) match = records[i]; });
      if (!match || tokenState(match, clock.now()) !== 'active') throw unauthorized(INVALID);
      return {
        kind: 'token', role: match.role, tenant: match.tenant, actor: match.id,
        ...(match.task_id ? { taskId: match.task_id } : {}),
      };
    },
  };
}
