import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
export const CLI = join(PROJECT, 'src', 'cli', 'main.ts');
/** tsx as an absolute URL: `--import tsx` would resolve from the child's cwd (a temp repo without node_modules). */
export const TSX = import.meta.resolve('tsx');
/** node arguments that run the svc CLI from source. */
export const svcArgv = (...args: string[]) => ['--import', TSX, CLI, ...args];

/** A real `svc up` child process on port 0 over a repository. */
export interface RunningServer {
  url: string;
  port: number;
  pid: number;
  token: string;
  child: ChildProcess;
  output(): string;
  /** Fetch with the admin token; JSON body when given. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * Resolves once every acknowledged write is on its file and in refs/sdd/state (the server writes
   * files right behind the acknowledgement: `svc_store_backlog` files and state_paths at 0 on three
   * polls in a row; the journal checkpoint is not waited for).
   */
  settled(timeoutMs?: number): Promise<void>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/** Run the svc CLI (through tsx) and collect its output. */
export function runCli(args: string[], opts: { cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, svcArgv(...args), {
      cwd: opts.cwd, env: { ...process.env, NO_COLOR: '1', ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (code) => { clearTimeout(t); done({ code, stdout, stderr }); });
    child.stdin.end(opts.input ?? '');
  });
}

/** Start `svc up --port 0` in `repo` and wait until it answers /health. */
export async function startServer(repo: string, opts: { args?: string[]; env?: Record<string, string>; token?: string; timeoutMs?: number; port?: number } = {}): Promise<RunningServer> {
  const token = opts.token ?? 'test-admin-token-0123456789abcdef0123';
  const child = spawn(process.execPath, svcArgv('up', '--port', String(opts.port ?? 0), '--log-json', ...(opts.args ?? [])), {
    cwd: repo, env: { ...process.env, NO_COLOR: '1', SERVICE_AUTH_TOKEN: token, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const info = join(repo, '.sdd', 'runtime', 'server.json');
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let port = 0;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc up exited ${child.exitCode}:\n${out}`);
    if (existsSync(info)) {
      try {
        const j = JSON.parse(readFileSync(info, 'utf8'));
        if (j.pid === child.pid && j.port) { port = j.port; break; }
      } catch { /* being written */ }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!port) { child.kill('SIGKILL'); throw new Error(`svc up did not start in time:\n${out}`); }
  const url = `http://127.0.0.1:${port}`;
  const api: RunningServer['api'] = async (method, path, body, headers = {}) => {
    const res = await fetch(url + path, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  const settled = async (timeoutMs = 15_000) => {
    const until = Date.now() + timeoutMs;
    for (let quiet = 0; quiet < 3;) {
      if (Date.now() > until) throw new Error(`svc did not settle within ${timeoutMs} ms:\n${out.slice(-2000)}`);
      const text = (await api('GET', '/metrics')).body as string;
      const backlog = [...String(text).matchAll(/^svc_store_backlog\{kind="(?:files|state_paths)"\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      quiet = backlog === 0 ? quiet + 1 : 0;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    url, port, pid: child.pid!, token, child, api, settled, output: () => out,
    stop: async (signal = 'SIGTERM') => { child.kill(signal); return exited; },
    kill: async () => { child.kill('SIGKILL'); await exited; },
  };
}
