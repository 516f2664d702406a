// Tasks per minute through the local orchestrator, 1 worker and 3 workers, with the fake agent doing the
// least a task can (write a file, commit, complete), and where each task's time goes: created → claimed,
// claimed → completed (agent start, run, push and report), completed → closed (gates and merge).
// `node --import tsx bench/workers.ts`; BENCH_TASKS (default 24), BENCH_RUNS (default 2).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRepo, makeTempDir } from '../test/helpers/repo.ts';
import { startServer, type RunningServer } from '../test/helpers/server.ts';
import { cloneForWorker, FAKE_AGENT, startWorker, type RunningWorker } from '../test/helpers/worker.ts';
import { median, num, table } from './lib/stats.ts';

const SECRET = 'cluster-secret-for-bench-0123456789abcdef';
const TASKS = Number(process.env.BENCH_TASKS ?? 24);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const FAST = ['--poll-interval-ms', '100', '--heartbeat-interval-ms', '1000'];

interface Run { perMin: number; claimS: number; runS: number; mergeS: number }
type Setup = { name: string; workers: number; slots: number };
const SETUPS: Setup[] = [
  { name: 'local orchestrator (6 agents)', workers: 0, slots: 6 },
  { name: '1 worker × 6 slots', workers: 1, slots: 6 },
  { name: '3 workers × 2 slots', workers: 3, slots: 2 },
];

async function once(setup: Setup): Promise<Run> {
  const repo = makeRepo('svc-bench-workers-');
  const tmp = makeTempDir('svc-bench-clones-');
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  const agents = ['agents:', '  default: generic', '  sandbox: none', '  generic:', `    command: "node ${FAKE_AGENT} --prompt-file {prompt_file}"`];
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), ['orchestrator:', '  tick_ms: 100', '  batch_size: 6', `  max_agents: ${setup.workers ? 0 : setup.slots}`, ...agents, ''].join('\n'));
  let s: RunningServer | undefined;
  const workers: RunningWorker[] = [];
  try {
    s = await startServer(repo.dir, { env: { SERVICE_CLUSTER_SECRET: SECRET } });
    for (let i = 0; i < setup.workers; i++) {
      const dir = join(tmp.dir, `w${i}`);
      cloneForWorker(s.url, SECRET, dir);
      workers.push(startWorker(dir, ['--server', s.url, '--token', SECRET, '--name', `w${i}`, '--slots', String(setup.slots), '--roles', 'backend', ...FAST]));
    }
    // Workers registered and idle before the clock starts.
    while (((await s.api('GET', '/cluster/nodes')).body as unknown[]).length < setup.workers) await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) ids.push((await s.api('POST', '/tasks', { title: `bench ${i}`, role: 'backend' })).body.id);
    let tasks: any[] = [];
    for (;;) {
      tasks = await Promise.all(ids.map(async (id) => (await s!.api('GET', `/tasks/${id}`)).body));
      if (tasks.every((t) => t.status === 'closed')) break;
      if (Date.now() - t0 > 600_000) throw new Error('not closed within 10 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = (Date.now() - t0) / 1000;
    const d = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;
    return {
      perMin: (TASKS / wall) * 60,
      claimS: median(tasks.map((t) => d(t.created_at, t.claimed_at))),
      runS: median(tasks.map((t) => d(t.claimed_at, t.completed_at))),
      mergeS: median(tasks.map((t) => d(t.completed_at, t.updated_at))),
    };
  } finally {
    for (const w of workers) await w.stop('SIGTERM');
    await s?.stop();
    repo.cleanup();
    tmp.cleanup();
  }
}

const rows: string[][] = [];
let base = 0;
for (const setup of SETUPS) {
  const runs: Run[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await once(setup));
  const perMin = median(runs.map((r) => r.perMin));
  if (!base) base = perMin;
  rows.push([setup.name, num(perMin, 1), num(perMin / base, 2), num(median(runs.map((r) => r.claimS)), 2), num(median(runs.map((r) => r.runS)), 2), num(median(runs.map((r) => r.mergeS)), 2)]);
  console.error(`${setup.name}: ${runs.map((r) => num(r.perMin, 1)).join(' / ')} tasks/min`);
}
console.log(`\n${TASKS} tasks per run, ${RUNS} runs per setup (medians); the agent writes a file, commits and completes\n`);
console.log(table(['setup', 'tasks/min', 'vs local', 'created→claimed s', 'claimed→completed s', 'completed→closed s'], rows));
