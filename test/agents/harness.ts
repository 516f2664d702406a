// An in-process svc over a temp git repository: task service, HTTP routes (tasks + agents) on port 0, and an
// orchestrator whose ticks the test drives (timers off) so every step is observable. Agents are real processes.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentRoutes, createOrchestrator, LogFollowers, partialMergeRoutes, type Orchestrator } from '../../src/agents/index.ts';
import { createTenantGate, ensureTenants } from '../../src/auth/index.ts';
import { defaultConfig, type Config } from '../../src/config/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createAuditLog } from '../../src/observe/index.ts';
import { openSse } from '../../src/server/index.ts';
import { createCommitter, createGit, createRecordStore, sddLayout, ulidIds, type RecordStore, type SddLayout } from '../../src/store/index.ts';
import { openTasks, TASK_SCHEMAS, type Task, type Tasks } from '../../src/tasks/index.ts';
import { PROJECT } from '../helpers/server.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { ADMIN, startServer, type Harness } from '../server/harness.ts';

export const FAKE_AGENT = join(PROJECT, 'fixtures', 'fake-agent.mjs');
export { ADMIN };

export interface AgentsHarness {
  repo: TempRepo;
  layout: SddLayout;
  config: Config;
  svc: Tasks;
  store: RecordStore;
  orch: Orchestrator;
  server: Harness;
  followers: LogFollowers;
  /** JSON API call with the admin token. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** Create a task over HTTP; `fake` lines become FAKE: instructions in its description. */
  create(title: string, fake?: string[], extra?: Record<string, unknown>): Promise<Task>;
  task(id: string): Task;
  /** One tick, then wait for finishing jobs (gates, merge). */
  step(): Promise<void>;
  /** Tick until `done()` holds (or throw after `ms`). */
  until(done: () => boolean, ms?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

/** Start the harness; `config` adjusts the defaults (generic adapter = the fake agent, max_agents 4). */
export async function startAgents(opts: { config?: (c: Config) => void; env?: Record<string, string>; timers?: boolean; reloadConfig?: (layout: SddLayout) => Config } = {}): Promise<AgentsHarness> {
  const repo = makeRepo('svc-orch-');
  appendFileSync(join(repo.dir, '.git', 'info', 'exclude'), '.sdd/\n');
  const layout = sddLayout(repo.dir);
  mkdirSync(layout.sdd, { recursive: true });
  const config = defaultConfig();
  config.agents = { ...config.agents, default: 'generic', generic: { command: `node ${FAKE_AGENT} --prompt-file {prompt_file}` } } as Config['agents'];
  config.orchestrator.tick_ms = 100;
  config.orchestrator.max_agents = 4;
  opts.config?.(config);
  const log = silentLogger();
  const clock = systemClock;
  const git = createGit(repo.dir);
  const committer = createCommitter({ layout, git, log, clock, intervalMs: 50, gcEveryCommits: 0 });
  await ensureTenants(layout);
  const audit = createAuditLog({ layout, clock, log, onAppend: (abs) => committer.touch(abs) });
  const store = createRecordStore({ layout, committer, log, audit });
  const domain = await openTasks({ layout, store, clock, ids: ulidIds(), log, tenants: createTenantGate({ layout, log, defaultMax: 1000 }), config });
  const svc = domain.tasks;
  let orch!: Orchestrator;
  const followers = new LogFollowers();
  const lazy: Pick<Orchestrator, 'sessions' | 'requestTick' | 'baseBranch'> = {
    sessions: () => orch.sessions(), requestTick: () => orch.requestTick(), baseBranch: () => orch.baseBranch(),
  };
  const routes = [
    ...domain.routes.read, ...domain.routes.write,
    ...agentRoutes({ svc, layout, store, orchestrator: lazy, openSse, followers, pingMs: 200 }),
    ...partialMergeRoutes({ svc, git, layout, clock, baseBranch: lazy.baseBranch, sessions: () => orch.sessions() }),
  ];
  const server = await startServer({ root: repo.dir, routes, schemas: TASK_SCHEMAS, config: (c) => { c.server.rate_limit.enabled = false; } });
  const reload = opts.reloadConfig;
  orch = createOrchestrator({
    root: repo.dir, layout, git, store, svc, clock, log, config, env: { ...process.env, ...opts.env }, debounceMs: 10,
    ...(reload ? { reloadConfig: () => reload(layout) } : {}),
  });
  await orch.start(server.url, { timers: opts.timers ?? false });

  const api: AgentsHarness['api'] = async (method, path, body, headers = {}) => {
    const res = await server.fetch(path, {
      method, token: ADMIN, ...(body === undefined ? { headers } : { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const step = async () => { await orch.tick(); await orch.whenIdle(); };
  return {
    repo, layout, config, svc, store, orch, server, followers, api, step,
    async create(title, fake = [], extra = {}) {
      const r = await api('POST', '/tasks', { title, description: fake.map((l) => `FAKE: ${l}`).join('\n'), ...extra });
      if (r.status !== 201) throw new Error(`create ${title}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as Task;
    },
    task: (id) => svc.get(id)!,
    async until(done, ms = 15_000, what = 'condition') {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; sessions: ${JSON.stringify(orch.sessions())}`);
        await step();
        await new Promise((r) => setTimeout(r, 30));
      }
    },
    async close() {
      await orch.stop();
      for (const s of orch.sessions()) if (s.pid) try { process.kill(-s.pid, 'SIGKILL'); } catch { /* gone */ }
      await server.close();
      await committer.stop();
      await audit.close();
      await store.close();
      repo.cleanup();
    },
  };
}

/** The log of a session, or '' when it has none yet. */
export function sessionLog(layout: SddLayout, sid: string): string {
  const f = layout.log(sid);
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
