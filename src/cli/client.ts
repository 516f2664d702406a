import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './args.ts';

/** Where a client command finds the server: env first, then the local `.sdd`. */
export interface Endpoint {
  url: string;
  token?: string;
  /** Where the token came from, for the words of a 401: --token, SERVICE_AUTH_TOKEN, or this file. */
  tokenFrom?: string;
}

/** SERVICE_SERVER_URL / SERVICE_AUTH_TOKEN, else `.sdd/runtime/server.json` and `.sdd/secrets/admin.token` under `workdir`. */
export function resolveEndpoint(env: NodeJS.ProcessEnv, workdir: string, overrides: { server?: string; token?: string } = {}): Endpoint {
  const sdd = join(workdir, '.sdd');
  let url = overrides.server ?? env.SERVICE_SERVER_URL;
  if (!url) {
    const info = readJsonQuiet<{ host?: string; port?: number }>(join(sdd, 'runtime', 'server.json'));
    if (info?.port) url = `http://${info.host && info.host !== '0.0.0.0' ? info.host : '127.0.0.1'}:${info.port}`;
  }
  url ??= `http://${env.SERVICE_HOST ?? '127.0.0.1'}:${env.SERVICE_PORT ?? '8052'}`;
  let token = overrides.token ?? env.SERVICE_AUTH_TOKEN;
  let tokenFrom = overrides.token ? '--token' : token ? 'SERVICE_AUTH_TOKEN' : undefined;
  const file = join(sdd, 'secrets', 'admin.token');
  if (!token && existsSync(file)) {
    token = readFileSync(file, 'utf8').trim();
    tokenFrom = file;
  }
  return { url: url.replace(/\/+$/, ''), token: token || undefined, ...(token && tokenFrom ? { tokenFrom } : {}) };
}

/** One JSON request; a non-2xx answer becomes a CliError carrying the server's detail. */
export async function call<T = unknown>(ep: Endpoint, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (ep.token) headers.authorization = `Bearer ${ep.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${ep.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new CliError(`cannot reach svc at ${ep.url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  const text = await res.text();
  const data = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const detail = (data as { detail?: unknown } | undefined)?.detail;
    const words = `${method} ${path} → ${res.status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail ?? text)}`;
    if (res.status === 401) throw new CliError(`${words}\n${tokenHint(ep)}`, 4);
    throw new CliError(words, res.status === 403 ? 4 : 1);
  }
  return data as T;
}

// A 401 names the secret it needs: secrets are not in refs/sdd/state, so a clone has none.
function tokenHint(ep: Endpoint): string {
  if (!ep.token) return 'no token: pass --token, set SERVICE_AUTH_TOKEN, or put the server\'s admin token in .sdd/secrets/admin.token (svc up writes it there on its first start; secrets are never committed, so a clone has none)';
  return `the token from ${ep.tokenFrom ?? 'the command line'} was refused by ${ep.url}: it belongs to another server, or it was revoked or expired (svc token create issues a new one on the server's machine)`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Parsed JSON of a small local file, or undefined when it is absent or unreadable. */
export function readJsonQuiet<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}
