// bench:cli: how long a CLI call takes, start to exit, for `svc task list` and `svc task show` (compiled dist/),
// against `git status` and a bare `node -e 0` measured in the same run, interleaved. Target: under 200 ms.
// BENCH_RUNS=N sets the rounds (default 30); BENCH_TASKS=N the board size (default 200).
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus } from 'node:os';
import { median, num, percentile, table } from './lib/stats.ts';
import { PROJECT, serverCommand, startSvc } from './lib/svc-server.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const TASKS = Number(process.env.BENCH_TASKS ?? 200);
const TARGET_MS = 200;

if (serverCommand().mode !== 'dist') {
  process.stdout.write('dist/ is older than src/: building it first (npm run build)\n');
  execFileSync('npm', ['run', 'build'], { cwd: PROJECT, stdio: 'inherit' });
}
const svc = await startSvc({ command: serverCommand('dist') });
try {
  const main = join(PROJECT, 'dist', 'cli', 'main.js');
  const env = { ...process.env, SERVICE_AUTH_TOKEN: svc.token, NO_COLOR: '1' };
  let last = '';
  for (let i = 0; i < TASKS; i++) {
    const res = await fetch(`${svc.url}/tasks`, { method: 'POST', headers: { authorization: `Bearer ${svc.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: `bench task ${i}`, description: 'x'.repeat(200) }) });
    last = ((await res.json()) as { id: string }).id;
  }
  const cases: [string, string, string[]][] = [
    ['node -e 0 (baseline: node start)', process.execPath, ['-e', '0']],
    ['git status', 'git', ['status']],
    ['svc --version', process.execPath, [main, '--version']],
    ['svc task list', process.execPath, [main, 'task', 'list']],
    // What every call cost before subcommands were lazy: the server and orchestrator modules loaded first.
    ['svc task list, server modules preloaded (before)', process.execPath, ['--import', pathToFileURL(join(PROJECT, 'dist', 'cli', 'up.js')).href, main, 'task', 'list']],
    ['svc task show ID', process.execPath, [main, 'task', 'show', last]],
    ['svc task show PREFIX (16 chars)', process.execPath, [main, 'task', 'show', last.slice(0, 16)]],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < RUNS + 2; round++) {
    for (const [name, cmd, args] of cases) {
      const t0 = performance.now();
      const r = spawnSync(cmd, args, { cwd: svc.repo.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
      // The first two rounds warm the page cache and git's index; they are not counted.
      if (round >= 2) times.get(name)!.push(ms);
    }
  }
  const git = median(times.get('git status')!);
  const rows = cases.map(([name]) => {
    const t = times.get(name)!;
    const m = median(t);
    const svcCall = name.startsWith('svc task') && !name.includes('before');
    return [name, num(m, 1), num(percentile(t, 90), 1), num(m / git, 1), svcCall ? (m < TARGET_MS ? `< ${TARGET_MS} ms: met` : `< ${TARGET_MS} ms: MISSED`) : ''];
  });
  process.stdout.write(`\nCLI call latency, ms, start to exit (${RUNS} interleaved rounds after 2 warm-ups; ${TASKS} tasks on the board; ${cpus().length} CPUs; Node ${process.version})\n\n`);
  process.stdout.write(`${table(['command', 'median', 'p90', 'x git status', 'target'], rows)}\n`);
} finally {
  await svc.stop();
  svc.repo.cleanup();
}
