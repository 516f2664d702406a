import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './args.ts';
import { storedToken } from './credentials.ts';

/** Where a client command finds the server: env first, then the local `.sdd`. */
export interface Endpoint {
  url: string;
  token?: string;
}

/** SERVICE_SERVER_URL / SERVICE_AUTH_TOKEN, else `.sdd/runtime/server.json`, the stored `svc login` token and `.sdd/secrets/admin.token` under `workdir`. */
export function resolveEndpoint(env: NodeJS.ProcessEnv, workdir: string, overrides: { server?: string; token?: string } = {}): Endpoint {
  const sdd = join(workdir, '.sdd');
  let url = overrides.server ?? env.SERVICE_SERVER_URL;
  if (!url) {
    const info = readJsonQuiet<{ host?: string; port?: number }>(join(sdd, 'runtime', 'server.json'));
    if (info?.port) url = `http://${info.host && info.host !== '0.0.0.0' ? info.host : '127.0.0.1'}:${info.port}`;
  }
  url ??= `http://${env.SERVICE_HOST ?? '127.0.0.1'}:${env.SERVICE_PORT ?? '8052'}`;
  // A token given (flag, env) wins; then the user's `svc login` for this server; then the local admin token.
  let token = overrides.token || env.SERVICE_AUTH_TOKEN || storedToken(env, url);
  if (!token && existsSync(join(sdd, 'secrets', 'admin.token'))) token = readFileSync(join(sdd, 'secrets', 'admin.token'), 'utf8').trim();
  return { url: url.replace(/\/+$/, ''), token: token || undefined };
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
    throw new CliError(`${method} ${path} → ${res.status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail ?? text)}`);
  }
  return data as T;
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
