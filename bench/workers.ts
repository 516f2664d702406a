// Tasks per minute through the local orchestrator, 1 worker and 3 workers (one agent at a time, then six),
// with the fake agent doing the least a task can (write a file, commit, complete), and where each task's
// time goes: created → claimed,
// claimed → completed (agent start, run, push and report), completed → closed (gates and merge). The
// overhead per task against the local orchestrator, from the agent's own progress notes: claim → agent
// start (its first note) and agent exit (its last note, just before it completes) → merged (closed).
// `node --import tsx bench/workers.ts`; BENCH_TASKS (default 24), BENCH_RUNS (default 2). One agent at a time shows
// the overhead of a task alone; six at once on 2 cores adds waiting for the CPU and for the server's merges.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { makeRepo, makeTempDir } from '../test/helpers/repo.ts';
import { startServer, type RunningServer } from '../test/helpers/server.ts';
import { cloneForWorker, FAKE_AGENT, startWorker, type RunningWorker } from '../test/helpers/worker.ts';
import { fake } from '../test/e2e/fake-config.ts';
import { median, num, table } from './lib/stats.ts';

const SECRET = 'cluster-secret-for-bench-0123456789abcdef';
const TASKS = Number(process.env.BENCH_TASKS ?? 24);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const FAST = ['--poll-interval-ms', '100', '--heartbeat-interval-ms', '1000'];

interface Run { perMin: number; claimS: number; runS: number; mergeS: number; startS: number; mergedS: number }
// Each setup is compared with the local orchestrator running as many agents at once (`local`).
type Setup = { name: string; workers: number; slots: number; local: number };
const SETUPS: Setup[] = [
  { name: 'local orchestrator (1 agent)', workers: 0, slots: 1, local: 0 },
  { name: '1 worker × 1 slot', workers: 1, slots: 1, local: 0 },
  { name: 'local orchestrator (6 agents)', workers: 0, slots: 6, local: 2 },
  { name: '1 worker × 6 slots', workers: 1, slots: 6, local: 2 },
  { name: '3 workers × 2 slots', workers: 3, slots: 2, local: 2 },
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
    for (let i = 0; i < TASKS; i++) {
      const description = fake('progress message=agent-start', `edit file=bench-${i}.txt content=${i}`, 'commit', 'progress message=agent-exit', 'complete');
      ids.push((await s.api('POST', '/tasks', { title: `bench ${i}`, role: 'backend', description })).body.id);
    }
    let tasks: any[] = [];
    for (;;) {
      tasks = await Promise.all(ids.map(async (id) => (await s!.api('GET', `/tasks/${id}`)).body));
      if (tasks.every((t) => t.status === 'closed')) break;
      if (Date.now() - t0 > 600_000) throw new Error('not closed within 10 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = (Date.now() - t0) / 1000;
    const d = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;
    // The agent's own notes: its first step and its last before it completes.
    const notes = await Promise.all(ids.map(async (id) => ((await s!.api('GET', `/tasks/${id}/progress`)).body.entries as { ts: string; message: string | null }[])));
    const at = (i: number, message: string) => notes[i]!.find((e) => e.message === message)?.ts ?? '';
    return {
      perMin: (TASKS / wall) * 60,
      claimS: median(tasks.map((t) => d(t.created_at, t.claimed_at))),
      runS: median(tasks.map((t) => d(t.claimed_at, t.completed_at))),
      mergeS: median(tasks.map((t) => d(t.completed_at, t.updated_at))),
      startS: median(tasks.map((t, i) => d(t.claimed_at, at(i, 'agent-start')))),
      mergedS: median(tasks.map((t, i) => d(at(i, 'agent-exit'), t.updated_at))),
    };
  } finally {
    for (const w of workers) await w.stop('SIGTERM');
    await s?.stop();
    await tidy(repo.cleanup);
    await tidy(tmp.cleanup);
  }
}

// A git process that outlived its parent by a moment still writes in .git: try again before giving up on a temp folder.
async function tidy(cleanup: () => void): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return cleanup();
    } catch (err) {
      if (i >= 5) return void console.error(`cleanup: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

// Runs interleaved (local, 1 worker, 3 workers, local, …): the machine's load drifts over minutes.
const runs = new Map<Setup, Run[]>(SETUPS.map((x) => [x, []]));
for (let r = 0; r < RUNS; r++) for (const setup of SETUPS) runs.get(setup)!.push(await once(setup));
const rows: string[][] = [];
const med = (list: Run[], k: keyof Run) => median(list.map((r) => r[k]));
for (const setup of SETUPS) {
  const list = runs.get(setup)!;
  const local = runs.get(SETUPS[setup.local]!)!;
  const over = (k: keyof Run) => `${num(med(list, k), 2)} (${med(list, k) - med(local, k) >= 0 ? '+' : ''}${num(med(list, k) - med(local, k), 2)})`;
  rows.push([setup.name, num(med(list, 'perMin'), 1), num(med(list, 'perMin') / med(local, 'perMin'), 2), num(med(list, 'claimS'), 2), num(med(list, 'runS'), 2), num(med(list, 'mergeS'), 2), over('startS'), over('mergedS')]);
  console.error(`${setup.name}: ${list.map((r) => num(r.perMin, 1)).join(' / ')} tasks/min`);
}
console.log(`\n${TASKS} tasks per run, ${RUNS} runs per setup (medians); the agent notes its start, writes a file, commits, notes its exit and completes\n`);
console.log(table(['setup', 'tasks/min', 'vs local', 'created→claimed s', 'claimed→completed s', 'completed→closed s', 'claim→agent start s (vs local)', 'agent exit→merged s (vs local)'], rows));
console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
