// Node tokens: HS256 JWTs signed with the cluster secret, verified with the injected clock, revocable in memory.
import { createHash, timingSafeEqual, webcrypto } from 'node:crypto';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import type { ClusterResolver } from '../auth/index.ts';
import type { Clock } from '../lib/clock.ts';
import { unauthorized } from '../lib/http-error.ts';
import type { NodeScope, Principal } from '../lib/route.ts';

/** Every cluster scope, in the order tokens list them. */
export const NODE_SCOPES: readonly NodeScope[] = ['node:register', 'node:heartbeat', 'node:admin'];
/** Scopes of the token a registration answers with. */
export const NODE_DEFAULT_SCOPES: readonly NodeScope[] = ['node:register', 'node:heartbeat'];

const INVALID = 'Invalid or expired token';
/** Verified tokens kept (oldest dropped first): a few per node of a large cluster. */
const VERIFIED_CACHE = 4096;
// iat_ms: when it was issued to the millisecond, so a revocation by node spares tokens issued after it in the same second.
type Claims = { sub: string; jti: string; iat: number; iat_ms?: number; exp: number; scopes: NodeScope[] };
const REVOKED = 'Token has been revoked';

/** A token just issued. */
export interface IssuedToken {
  token: string;
  jti: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** Issues and checks node tokens; revocations live in memory only (INTERFACE.md Authentication 8). */
export interface NodeTokens extends ClusterResolver {
  issue(nodeId: string, scopes: readonly NodeScope[], hours?: number): Promise<IssuedToken>;
  /** Refuse the token with this id from now on. */
  revokeJti(jti: string): void;
  /** Refuse every token of this node issued up to the current second. */
  revokeNode(nodeId: string): void;
}

export interface NodeTokenDeps {
  secret: string;
  clock: Clock;
  /** Token ids (jti). */
  newJti: () => string;
  /** Lifetime of issued tokens by default (token_expiry_hours). */
  expiryHours: number;
}

/** True when `scopes` is a list of known cluster scopes. */
export function isScopeList(scopes: unknown): scopes is NodeScope[] {
  return Array.isArray(scopes) && scopes.every((s) => (NODE_SCOPES as readonly unknown[]).includes(s));
}

// A JWT whose payload carries `scopes` is a node token; anything else is left to the other resolvers.
function looksLikeNodeToken(token: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    return Array.isArray((decodeJwt(token) as { scopes?: unknown }).scopes);
  } catch {
    return false;
  }
}

/** Node tokens signed with the cluster secret (the secret itself is accepted as a bearer with every scope). */
export function createNodeTokens(deps: NodeTokenDeps): NodeTokens {
  const key = new TextEncoder().encode(deps.secret);
  const secretDigest = createHash('sha256').update(deps.secret).digest();
  const revokedJti = new Set<string>();
  const revokedNodes = new Map<string, number>();
  const secretPrincipal: Principal = Object.freeze({ kind: 'cluster-secret', role: 'agent', tenant: null, actor: 'cluster-secret', scopes: NODE_SCOPES });
  const nowS = () => Math.floor(deps.clock.now() / 1000);

  // The key imported once: jose re-imports a raw key on every call (~5× the cost of the check itself).
  let cryptoKey: Promise<webcrypto.CryptoKey> | undefined;
  const verifyKey = () => (cryptoKey ??= webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']));
  // Tokens already verified, so a node's heartbeats and claims pay for the signature once; expiry and revocation are checked every time.
  const verified = new Map<string, Claims>();

  async function claimsOf(token: string): Promise<Claims> {
    const known = verified.get(token);
    if (known) return known;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, await verifyKey(), { algorithms: ['HS256'], currentDate: new Date(deps.clock.now()), requiredClaims: ['sub', 'exp', 'iat', 'jti'] }));
    } catch {
      throw unauthorized(INVALID);
    }
    const claims = payload as unknown as Claims;
    if (!isScopeList(claims.scopes) || typeof claims.sub !== 'string' || !/^[0-9a-f]{12}$/.test(claims.sub)) throw unauthorized(INVALID);
    if (verified.size >= VERIFIED_CACHE) verified.delete(verified.keys().next().value!);
    verified.set(token, claims);
    return claims;
  }

  async function verify(token: string): Promise<Principal> {
    const { sub, jti, iat, iat_ms, exp, scopes } = await claimsOf(token);
    if (exp * 1000 <= deps.clock.now()) throw unauthorized(INVALID);
    const nodeCut = revokedNodes.get(sub);
    // Without iat_ms (a token signed elsewhere), one issued in the second of the cut counts as before it.
    const issuedMs = typeof iat_ms === 'number' ? iat_ms : iat * 1000;
    if (revokedJti.has(jti) || (nodeCut !== undefined && issuedMs <= nodeCut)) throw unauthorized(REVOKED);
    return { kind: 'node', role: 'agent', tenant: null, actor: `node:${sub}`, nodeId: sub, scopes };
  }

  return {
    async principal(token) {
      const presented = createHash('sha256').update(token).digest();
      if (timingSafeEqual(presented, secretDigest)) return secretPrincipal;
      return verified.has(token) || looksLikeNodeToken(token) ? verify(token) : undefined;
    },
    async issue(nodeId, scopes, hours = deps.expiryHours) {
      const iatMs = deps.clock.now();
      const iat = Math.floor(iatMs / 1000);
      const exp = iat + Math.max(1, Math.round(hours * 3600));
      const jti = deps.newJti();
      const token = await new SignJWT({ user_id: nodeId, scopes: [...scopes], iat_ms: iatMs }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(nodeId).setIssuedAt(iat).setExpirationTime(exp).setJti(jti).sign(key);
      return { token, jti, exp };
    },
    revokeJti(jti) { revokedJti.add(jti); },
    revokeNode(nodeId) { revokedNodes.set(nodeId, deps.clock.now()); },
  };
}
