// Shared by the cluster tests: the cluster secret they run with, tokens made by hand (good, expired, forged), requests.
import { SignJWT } from 'jose';
import type { RunningServer } from '../helpers/server.ts';

/** SERVICE_CLUSTER_SECRET of the test servers. */
export const SECRET = 'cluster-secret-for-tests-0123456789abcdef';
export const ALL_SCOPES = ['node:register', 'node:heartbeat', 'node:admin'];

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A node token signed by hand: `key` (default the secret), `alg` HS256/HS512/none, expiry `expS` seconds from now (negative: expired). */
export async function forge(sub: string, scopes: string[], o: { key?: string; alg?: 'HS256' | 'HS512' | 'none'; expS?: number; jti?: string } = {}): Promise<string> {
  const iat = Math.floor(Date.now() / 1000) - (o.expS !== undefined && o.expS < 0 ? 7200 : 0);
  const exp = Math.floor(Date.now() / 1000) + (o.expS ?? 3600);
  const claims = { sub, user_id: sub, scopes, iat, exp, jti: o.jti ?? `forged-${Math.random().toString(16).slice(2)}` };
  if (o.alg === 'none') return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
  return new SignJWT(claims).setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(o.key ?? SECRET));
}

export type Reply = { status: number; body: any };

/** A request with a given bearer (or none), JSON body when given. */
export async function call(s: RunningServer, method: string, path: string, token: string | null, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(s.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}

/** The value of one series of a /metrics text (0 when absent). */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
