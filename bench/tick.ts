// Benchmark of the orchestrator: tick duration with 10k open tasks and 32 running sessions (real idle
// `sleep` processes in real worktrees), the ready-queue scan alone, and SSE log delivery latency
// (append a line to a session log -> the EventSource client receives it). Run: npm run bench:tick
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import { agentRoutes, createOrchestrator, fairQueues, LogFollowers } from '../src/agents/index.ts';
import { createAuthenticator, createTenantGate, ensureTenants } from '../src/auth/index.ts';
import { defaultConfig, type Config } from '../src/config/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import { silentLogger } from '../src/lib/log.ts';
import { createAuditLog } from '../src/observe/index.ts';
import { createMetrics, createServer, openSse } from '../src/server/index.ts';
import { createCommitter, createGit, createRecordStore, sddLayout, stableStringify, ulidIds } from '../src/store/index.ts';
import { newTask, openTasks } from '../src/tasks/index.ts';
import { makeRepo } from '../test/helpers/repo.ts';

const OPEN = Number(process.env.BENCH_OPEN ?? 10_000);
const SESSIONS = 32;
const TICKS = 200;
const LINES = 300;
const TOKEN = 'bench-admin-token';

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!; };
const ms = (n: number) => n.toFixed(2);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const repo = makeRepo('svc-bench-tick-');
writeFileSync(`${repo.dir}/.git/info/exclude`, '.sdd/\n');
const layout = sddLayout(repo.dir);
const log = silentLogger();
const clock = systemClock;
const config: Config = defaultConfig();
config.agents = { ...config.agents, default: 'generic', generic: { command: 'sleep 3600' } } as Config['agents'];
Object.assign(config.orchestrator, { max_agents: SESSIONS, batch_size: SESSIONS, tick_ms: 3000, stall_snapshots: 5 });
config.server.rate_limit.enabled = false;

// Seed: the task files straight to disk (32 urgent ones the agents take, the rest stay open), then load.
const ids = ulidIds();
const seedStart = performance.now();
for (let i = 0; i < OPEN + SESSIONS; i++) {
  const t = newTask({ title: `bench task ${i}`, priority: i < SESSIONS ? 0 : 5, role: i % 3 === 0 ? 'qa' : 'backend' }, { id: ids.next(), now: clock.iso(), tenant: 'default' });
  const file = layout.task(t.id);
  mkdirSync(file.slice(0, file.lastIndexOf('/')), { recursive: true });
  writeFileSync(file, stableStringify(t));
}
const git = createGit(repo.dir);
const committer = createCommitter({ layout, git, log, clock, intervalMs: 250, gcEveryCommits: 0 });
await ensureTenants(layout);
const audit = createAuditLog({ layout, clock, log, onAppend: (abs) => committer.touch(abs) });
const store = createRecordStore({ layout, committer, log, audit });
const { tasks: svc, loaded } = await openTasks({ layout, store, clock, ids, log, tenants: createTenantGate({ layout, log, defaultMax: 1_000_000 }), config });
const seedS = (performance.now() - seedStart) / 1000;

const orch = createOrchestrator({ root: repo.dir, layout, git, store, svc, clock, log, config, env: process.env });
const followers = new LogFollowers();
const server = createServer({
  routes: agentRoutes({ svc, layout, store, orchestrator: orch, openSse, followers }), log, config, clock, version: 'bench', metrics: createMetrics({ defaults: false }),
  authenticator: createAuthenticator({ layout, clock, log, env: { authToken: TOKEN, disabled: false } }),
});
const { port } = await server.listen(0, '127.0.0.1');
await orch.start(`http://127.0.0.1:${port}`, { timers: false });

// Dispatch the 32 sessions (one tick), then give each task a run of progress snapshots for stall detection.
const t0 = performance.now();
await orch.tick();
const dispatchMs = performance.now() - t0;
const sessions = orch.sessions();
if (sessions.filter((s) => s.status === 'running').length !== SESSIONS) throw new Error(`expected ${SESSIONS} running sessions, got ${sessions.length}`);
for (const s of sessions) {
  for (let i = 0; i < 5; i++) await svc.reportProgress(s.task_id, { files_changed: i, tests_passing: 1, errors: 0 }, { actor: 'bench', tenant: 'default' });
}
const openCount = svc.list({ status: 'open' }).length;

const ticks: number[] = [];
for (let i = 0; i < TICKS + 10; i++) {
  const a = performance.now();
  await orch.tick();
  if (i >= 10) ticks.push(performance.now() - a);
}
const scans: number[] = [];
for (let i = 0; i < TICKS; i++) {
  const a = performance.now();
  fairQueues(svc.list({ status: 'open' }), null);
  scans.push(performance.now() - a);
}

// SSE: one client on one session's log; lines appended every 5 ms carry their index.
const sid = sessions[0]!.session_id;
const sent = new Map<number, number>();
const latency: number[] = [];
const es = new EventSource(`http://127.0.0.1:${port}/agents/${sid}/stream`, {
  fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${TOKEN}` } }),
});
es.addEventListener('log', (e) => {
  const m = /^bench line (\d+)$/.exec(JSON.parse(e.data).line);
  if (m && sent.has(Number(m[1]))) latency.push(performance.now() - sent.get(Number(m[1]))!);
});
await new Promise<void>((r) => es.addEventListener('open', () => r()));
await sleep(200);
for (let i = 0; i < LINES; i++) {
  sent.set(i, performance.now());
  appendFileSync(layout.log(sid), `bench line ${i}\n`);
  await sleep(5);
}
for (let i = 0; i < 100 && latency.length < LINES; i++) await sleep(20);
es.close();

console.log(`\ntick benchmark — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; seeded ${loaded} tasks in ${seedS.toFixed(1)} s`);
console.log(`first tick (dispatch of ${SESSIONS} agents: worktrees, tokens, spawn): ${Math.round(dispatchMs)} ms\n`);
console.log('| measure | n | median ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|');
console.log(`| tick: ${openCount} open tasks, ${SESSIONS} running sessions | ${ticks.length} | ${ms(pct(ticks, 50))} | ${ms(pct(ticks, 99))} | ${ms(Math.max(...ticks))} |`);
console.log(`| ready-queue scan of ${openCount} open tasks (fairQueues) | ${scans.length} | ${ms(pct(scans, 50))} | ${ms(pct(scans, 99))} | ${ms(Math.max(...scans))} |`);
console.log(`| SSE delivery, append -> client (${latency.length}/${LINES} lines) | ${latency.length} | ${ms(pct(latency, 50))} | ${ms(pct(latency, 99))} | ${ms(Math.max(...latency))} |`);

await orch.stop();
for (const s of orch.sessions()) if (s.pid) try { process.kill(-s.pid, 'SIGKILL'); } catch { /* gone */ }
await server.close(100);
await committer.stop();
await audit.close();
await store.close();
repo.cleanup();
