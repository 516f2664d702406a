// The CLI's stored sign-in tokens: ~/.config/svc/credentials.json (0600), one entry per server URL.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Credential {
  access_token: string;
  token_type: string;
  expires_at: string | null;
  saved_at: string;
  /** Who signed in (for `svc login` and people reading the file). */
  user?: string;
}
interface CredentialsFile { version: number; servers: Record<string, Credential> }

/** `$XDG_CONFIG_HOME/svc/credentials.json`, else `~/.config/svc/credentials.json`. */
export function credentialsPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'svc', 'credentials.json');
}

/** A server URL as a key: no trailing slash. */
export const serverKey = (url: string): string => url.replace(/\/+$/, '');

function read(env: NodeJS.ProcessEnv): CredentialsFile {
  try {
    const f = JSON.parse(readFileSync(credentialsPath(env), 'utf8')) as Partial<CredentialsFile>;
    return { version: Number(f.version) || 1, servers: f.servers && typeof f.servers === 'object' ? f.servers : {} };
  } catch {
    return { version: 1, servers: {} };
  }
}

function write(env: NodeJS.ProcessEnv, f: CredentialsFile): void {
  const path = credentialsPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(f, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The stored token for `url`, unless absent or expired at `now`. */
export function storedToken(env: NodeJS.ProcessEnv, url: string, now = Date.now()): string | undefined {
  const c = read(env).servers[serverKey(url)];
  if (!c?.access_token || (c.expires_at && Date.parse(c.expires_at) <= now)) return undefined;
  return c.access_token;
}

/** Remember a token for `url` (replaces the one before). */
export function saveCredential(env: NodeJS.ProcessEnv, url: string, c: Credential): void {
  const f = read(env);
  f.servers[serverKey(url)] = c;
  write(env, f);
}

/** Forget the token for `url`; the one forgotten, if any. */
export function removeCredential(env: NodeJS.ProcessEnv, url: string): Credential | undefined {
  const f = read(env);
  const c = f.servers[serverKey(url)];
  if (!c) return undefined;
  delete f.servers[serverKey(url)];
  write(env, f);
  return c;
}
