// `svc worker` flags and environment → the worker's options, validated (pure; INTERFACE.md Worker
// process parameters). A wrong value is a usage error naming the flag.

/** What a worker runs with. */
export interface WorkerOptions {
  /** Central server URL, without a trailing slash. */
  server: string;
  /** Bearer of registration: the cluster secret or a token holding node:register. */
  token: string;
  name: string;
  slots: number;
  roles: string[];
  labels: Record<string, string>;
  /** Agent CLI to invoke; null = detected on PATH. */
  adapter: string | null;
  /** Model for tasks that name none; null = the adapter's default. */
  model: string | null;
  pollMs: number;
  heartbeatMs: number;
  workdir: string;
  /** How long SIGINT/SIGTERM lets running agents finish before their tasks are released. */
  graceMs: number;
}

/** The raw flag values (strings as typed) and repeatable labels. */
export interface WorkerFlags {
  server?: string;
  token?: string;
  name?: string;
  slots?: string;
  roles?: string;
  labels: string[];
  adapter?: string;
  model?: string;
  'poll-interval'?: string;
  'poll-interval-ms'?: string;
  'heartbeat-interval-ms'?: string;
  workdir?: string;
  'grace-period'?: string;
}

export const WORKER_DEFAULTS = { slots: 6, roles: ['backend', 'qa', 'security', 'frontend'], pollS: 10, heartbeatMs: 15_000, graceS: 300 } as const;
const ROLE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$/;

/** Options from flags, then SERVICE_SERVER_URL / SERVICE_AUTH_TOKEN; an error message names what is wrong. */
export function workerOptions(f: WorkerFlags, env: Readonly<Record<string, string | undefined>>, host: { hostname: string; cwd: string }):
  { ok: true; options: WorkerOptions } | { ok: false; error: string } {
  try {
    const server = (f.server ?? env.SERVICE_SERVER_URL ?? '').trim().replace(/\/+$/, '');
    if (!server) throw new Error('--server URL is required (or SERVICE_SERVER_URL)');
    let url: URL;
    try { url = new URL(server); } catch { throw new Error(`--server must be an http(s) URL, got '${server}'`); }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--server must be an http(s) URL, got '${server}'`);
    const token = (f.token ?? env.SERVICE_AUTH_TOKEN ?? '').trim();
    if (!token) throw new Error('--token is required (or SERVICE_AUTH_TOKEN): the cluster secret or a token with node:register');
    const pollMsFlag = int('poll-interval-ms', f['poll-interval-ms'], 10, 3_600_000);
    return {
      ok: true,
      options: {
        server, token,
        name: nonEmpty('name', f.name) ?? host.hostname,
        slots: int('slots', f.slots, 1, 256) ?? WORKER_DEFAULTS.slots,
        roles: roles(f.roles),
        labels: labels(f.labels),
        adapter: nonEmpty('adapter', f.adapter) ?? null,
        model: nonEmpty('model', f.model) ?? null,
        pollMs: pollMsFlag ?? (int('poll-interval', f['poll-interval'], 1, 3600) ?? WORKER_DEFAULTS.pollS) * 1000,
        heartbeatMs: int('heartbeat-interval-ms', f['heartbeat-interval-ms'], 100, 3_600_000) ?? WORKER_DEFAULTS.heartbeatMs,
        workdir: nonEmpty('workdir', f.workdir) ?? host.cwd,
        graceMs: (int('grace-period', f['grace-period'], 0, 86_400) ?? WORKER_DEFAULTS.graceS) * 1000,
      },
    };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function int(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new Error(`--${name} expects a whole number, got '${v}'`);
  const n = Number(v);
  if (n < min || n > max) throw new Error(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function nonEmpty(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!v.trim()) throw new Error(`--${name} must not be empty`);
  return v.trim();
}

function roles(v: string | undefined): string[] {
  if (v === undefined) return [...WORKER_DEFAULTS.roles];
  const list = [...new Set(v.split(',').map((r) => r.trim()).filter(Boolean))];
  if (list.length === 0) throw new Error('--roles needs at least one role (a,b,c)');
  const bad = list.find((r) => !ROLE.test(r));
  if (bad !== undefined) throw new Error(`--roles: '${bad}' is not a role name (lowercase letters, digits, - and _)`);
  return list;
}

function labels(list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of list) {
    const eq = l.indexOf('=');
    const key = eq > 0 ? l.slice(0, eq).trim() : '';
    if (!LABEL_KEY.test(key)) throw new Error(`--label '${l}': expected key=value`);
    if (key in out) throw new Error(`--label: '${key}' is given twice`);
    out[key] = l.slice(eq + 1).trim();
  }
  return out;
}
