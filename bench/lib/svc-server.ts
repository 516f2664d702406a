// A real `svc up` child process over a temp git repository, set up for load: no rate limit, a big quota.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRepo, type TempRepo } from '../../test/helpers/repo.ts';
import { jsonClient, type JsonClient } from './http.ts';
import type { CycleSteps } from './loop.ts';

export const PROJECT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
const TOKEN = 'bench-admin-token-0123456789abcdef';

export interface SvcServer {
  url: string;
  pid: number;
  token: string;
  repo: TempRepo;
  /** How the server runs: compiled `dist/` or `src/` through tsx. */
  mode: 'dist' | 'tsx';
  stop(): Promise<void>;
  output(): string;
}

/** The newest modification time (ms) of the files under `dir`, recursively. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

export interface ServerCommand { mode: 'dist' | 'tsx'; argv: string[] }

/** node arguments that start the CLI: compiled JS when dist/ is newer than every src/ file (or `force`), else tsx; BENCH_NODE_FLAGS go before dist/'s. */
export function serverCommand(force?: string): ServerCommand {
  const dist = join(PROJECT, 'dist', 'cli', 'main.js');
  const fresh = existsSync(dist) && newestMtime(join(PROJECT, 'dist')) >= newestMtime(join(PROJECT, 'src'));
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  if (force === 'dist' || (force !== 'tsx' && fresh)) return { mode: 'dist', argv: [...flags, dist] };
  return { mode: 'tsx', argv: ['--import', import.meta.resolve('tsx'), join(PROJECT, 'src', 'cli', 'main.ts')] };
}

/** Start `svc up --port 0 --no-orchestrator` in a fresh temp repo; `nodeArgs` go before the script (e.g. --cpu-prof). */
export async function startSvc(opts: { nodeArgs?: string[]; repo?: TempRepo; configYaml?: string; command?: ServerCommand; env?: Record<string, string> } = {}): Promise<SvcServer> {
  const repo = opts.repo ?? makeRepo('svc-bench-');
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  const cfg = join(repo.dir, '.sdd', 'config.yaml');
  if (!existsSync(cfg)) writeFileSync(cfg, 'server:\n  rate_limit:\n    enabled: false\ntenants:\n  default_max_tasks: 1000000\n' + (opts.configYaml ?? ''));
  const cmd = opts.command ?? serverCommand();
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...cmd.argv, 'up', '--port', '0', '--no-orchestrator', '--log-json'], {
    cwd: repo.dir, env: { ...process.env, NO_COLOR: '1', SERVICE_AUTH_TOKEN: TOKEN, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const port = await waitForPort(repo.dir, child, () => out);
  return {
    url: `http://127.0.0.1:${port}`, pid: child.pid!, token: TOKEN, repo, mode: cmd.mode, output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitForPort(dir: string, child: ChildProcess, out: () => string): Promise<number> {
  const info = join(dir, '.sdd', 'runtime', 'server.json');
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc up exited ${child.exitCode}:\n${out()}`);
    try {
      const j = JSON.parse(readFileSync(info, 'utf8')) as { pid?: number; port?: number };
      if (j.pid === child.pid && j.port) return j.port;
    } catch { /* not written yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`svc up did not start in time:\n${out()}`);
}

/** Create `n` open tasks of `role` through POST /tasks/batch in chunks of `chunk`; returns seconds taken. */
export async function seedTasks(server: SvcServer, n: number, role: string, chunk = 1000, prefix = 'bench'): Promise<number> {
  const client: JsonClient = jsonClient(server.url, server.token, 2);
  const t0 = Date.now();
  try {
    for (let i = 0; i < n; i += chunk) {
      const tasks = Array.from({ length: Math.min(chunk, n - i) }, (_, k) => ({ title: `${prefix} task ${i + k}`, role }));
      const res = await client.call('POST', '/tasks/batch', { tasks });
      if (res.status !== 201) throw new Error(`POST /tasks/batch answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    }
  } finally {
    client.close();
  }
  return (Date.now() - t0) / 1000;
}

/**
 * Wait until the server has every acknowledged write on its file, in refs/sdd/state and checkpointed
 * out of its journal (the `svc_store_backlog` gauges at 0 on three polls in a row), so a measured loop
 * does not pay for the seed.
 * `journal: false` leaves out the journal checkpoint (a timer, every 2 s). Returns when (epoch ms) the
 * backlog was first seen at 0 in that final streak.
 */
export async function waitSettled(server: SvcServer, o: { journal?: boolean; timeoutMs?: number } = {}): Promise<number> {
  const timeoutMs = o.timeoutMs ?? 300_000;
  const kinds = o.journal === false ? /^svc_store_backlog\{kind="(?:files|state_paths)"\} (\d+)/gm : /^svc_store_backlog\{[^}]*\} (\d+)/gm;
  const until = Date.now() + timeoutMs;
  let quiet = 0;
  let since = Date.now();
  while (quiet < 3) {
    if (Date.now() > until) throw new Error(`svc did not settle within ${timeoutMs} ms`);
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } })).text();
    const backlog = [...text.matchAll(kinds)].reduce((sum, m) => sum + Number(m[1]), 0);
    if (backlog !== 0) quiet = 0;
    else if (quiet++ === 0) since = Date.now();
    await new Promise((r) => setTimeout(r, quiet ? 100 : 20));
  }
  return since;
}

/**
 * next = GET /tasks/next/<role> (404 = empty), complete = POST /tasks/<id>/complete, over `workers` keep-alive
 * sockets; `fused`: complete?next=<role> brings the worker's next task, so a cycle is one request.
 */
export function svcSteps(server: SvcServer, role: string, workers: number, fused = false): { steps: CycleSteps<string>; close(): void } {
  const client = jsonClient(server.url, server.token, workers);
  // Fused: complete?next=<role> claims the worker's next task in the same request (POST /tasks/{id}/complete?next=).
  const pending = new Map<number, string>();
  const fusedSteps: CycleSteps<string> = {
    next: (w) => steps.next(w),
    prefetched(w) {
      const id = pending.get(w);
      pending.delete(w);
      return id;
    },
    async complete(w, id) {
      const res = await client.call('POST', `/tasks/${id}/complete?next=${role}`, { result_summary: 'benchmark: done' });
      if (res.status !== 200) throw new Error(`POST /tasks/${id}/complete?next= answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      const next = (res.body as { next: { id: string } | null }).next;
      if (next) pending.set(w, next.id);
    },
  };
  const steps: CycleSteps<string> = {
    async next() {
      const res = await client.call('GET', `/tasks/next/${role}`);
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw new Error(`GET /tasks/next/${role} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      return (res.body as { id: string }).id;
    },
    async complete(_w, id) {
      const res = await client.call('POST', `/tasks/${id}/complete`, { result_summary: 'benchmark: done' });
      if (res.status !== 200) throw new Error(`POST /tasks/${id}/complete answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    },
  };
  return { steps: fused ? fusedSteps : steps, close: () => client.close() };
}
