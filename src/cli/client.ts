import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { CliError } from './args.ts';
import { storedToken } from './credentials.ts';

/** Where a client command finds the server: flags, then env, then the `.sdd` of the repository it runs in. */
export interface Endpoint {
  url: string;
  token?: string;
  /** Where the token came from, named in a 401 so a stale SERVICE_AUTH_TOKEN is easy to spot. */
  tokenSource?: 'flag' | 'env' | 'login' | 'file';
  /** The repository's own admin.token, when another token was chosen over it. */
  localTokenFile?: string;
}

/** Exit codes of DECISIONS.md "CLI exit codes". */
export const EXIT = { failed: 1, usage: 2, notFound: 3, auth: 4, unreachable: 5 } as const;

/** The nearest folder at or above `dir` holding `.sdd`, or undefined. */
export function findSdd(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.sdd'))) return join(d, '.sdd');
    if (dirname(d) === d) return undefined;
  }
}

/** --server/--token, else SERVICE_SERVER_URL / SERVICE_AUTH_TOKEN, else the stored `svc login` token for the server, else `.sdd/runtime/server.json` and `.sdd/secrets/admin.token`. */
export function resolveEndpoint(env: NodeJS.ProcessEnv, workdir: string, overrides: { server?: string; token?: string } = {}): Endpoint {
  const sdd = findSdd(workdir);
  let url = overrides.server ?? env.SERVICE_SERVER_URL;
  if (!url && sdd) {
    const info = readJsonQuiet<{ host?: string; port?: number }>(join(sdd, 'runtime', 'server.json'));
    if (info?.port) url = `http://${info.host && !['0.0.0.0', '::'].includes(info.host) ? (info.host.includes(':') ? `[${info.host}]` : info.host) : '127.0.0.1'}:${info.port}`;
  }
  url ??= `http://${env.SERVICE_HOST ?? '127.0.0.1'}:${env.SERVICE_PORT ?? '8052'}`;
  const file = sdd ? join(sdd, 'secrets', 'admin.token') : undefined;
  const local = file && existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
  // A token given (flag, env) wins; then the user's `svc login` for this server; then the local admin token.
  const stored = storedToken(env, url);
  const chosen = overrides.token ? { token: overrides.token, tokenSource: 'flag' as const }
    : env.SERVICE_AUTH_TOKEN ? { token: env.SERVICE_AUTH_TOKEN, tokenSource: 'env' as const }
      : stored ? { token: stored, tokenSource: 'login' as const }
        : local ? { token: local, tokenSource: 'file' as const } : {};
  const other = local && chosen.token !== local && chosen.tokenSource !== 'file' ? { localTokenFile: file } : {};
  return { url: url.replace(/\/+$/, ''), ...chosen, ...other };
}

/** One JSON request; a non-2xx answer becomes a CliError carrying the server's detail and the exit code of its status. */
export async function call<T = unknown>(ep: Endpoint, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (ep.token) headers.authorization = `Bearer ${ep.token}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) });
  let res: { status: number; text: string };
  try {
    res = await send(`${ep.url}${path}`, method, headers, payload);
  } catch (err) {
    throw new CliError(`cannot reach svc at ${ep.url}: ${(err as Error).message} (is 'svc up' running? set --server or SERVICE_SERVER_URL)`, EXIT.unreachable);
  }
  const data = res.text ? safeJson(res.text) : undefined;
  if (res.status >= 200 && res.status < 300) return data as T;
  throw failure(res.status, `${method} ${path.split('?')[0]}`, detailText(data, res.text), ep);
}

/** The CliError of an HTTP error answer: its detail, the token used on a 401, the exit code of its status. */
export function failure(status: number, what: string, detail: string, ep?: Endpoint): CliError {
  return new CliError(`${what} → ${status}: ${detail}${status === 401 && ep ? tokenHint(ep) : ''}`, exitCodeOf(status));
}

/** The exit code of an HTTP error status. */
export function exitCodeOf(status: number): number {
  if (status === 404) return EXIT.notFound;
  if (status === 401 || status === 403) return EXIT.auth;
  return EXIT.failed;
}

/** A server's `detail` on one line: a string as is, 422 issues as their messages joined. */
export function detailText(data: unknown, raw: string): string {
  const detail = (data as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((i: { msg?: unknown; loc?: unknown[] }) => (typeof i?.msg === 'string' ? i.msg : JSON.stringify(i))).join('; ');
  return JSON.stringify(detail ?? raw);
}

function tokenHint(ep: Endpoint): string {
  if (!ep.token) return ' (no token: pass --token, set SERVICE_AUTH_TOKEN, run svc login, or put the server\'s admin token in .sdd/secrets/admin.token; svc up writes it there on its first start, and secrets are never committed, so a clone has none)';
  const from = ep.tokenSource === 'env' ? 'SERVICE_AUTH_TOKEN from the environment' : ep.tokenSource === 'flag' ? '--token' : ep.tokenSource === 'file' ? '.sdd/secrets/admin.token' : ep.tokenSource === 'login' ? 'the token stored by svc login' : 'no token';
  const also = ep.localTokenFile ? `; this repository's ${ep.localTokenFile} holds another one (unset SERVICE_AUTH_TOKEN to use it)` : '';
  return ` (used ${from}${also})`;
}

// node:http rather than fetch: loading fetch costs a CLI call ~20 ms before the first byte is sent.
async function send(url: string, method: string, headers: Record<string, string>, payload?: string): Promise<{ status: number; text: string }> {
  const request = url.startsWith('https:') ? (await import('node:https')).request : httpRequest;
  return new Promise((done, fail) => {
    const req = request(url, { method, headers }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(payload);
  });
}

// A 401 names the secret it needs: secrets are not in refs/sdd/state, so a clone has none.

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
