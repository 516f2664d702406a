// Where one task loop's CPU goes, and an A/B of two builds that holds on a machine whose speed drifts.
//
// Each run: a `dist/` server (svc up --no-orchestrator in a temp repo), 3,000 warm-up cycles at W = 32, N
// tasks seeded and settled, then one loop of W clients (two requests per cycle, or the fused
// complete?next= with BENCH_FUSED=1). Printed per run: cycles/s, p50/p99, the client's CPU per cycle
// (process.cpuUsage), the server's per cycle (/proc/<pid>/stat, all its threads) and their ratio. The client
// is the same code whichever server runs, so "server / client" cancels the machine's speed: on a shared VM
// cycles/s of one build move by 2× within minutes while that ratio stays within ~±5%.
//
// BENCH_BASE_DIST=<folder>: alternate runs of that build (A; e.g. a worktree of an older commit, built) and
// this checkout's dist/ (B), BENCH_PAIRS pairs (default 3), and print the median ratio of each side.
// BENCH_N (default 10000), BENCH_W (default 32), BENCH_FUSED=1.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoop } from './lib/loop.ts';
import { median, percentile } from './lib/stats.ts';
import { PROJECT, seedTasks, startSvc, svcSteps, waitSettled } from './lib/svc-server.ts';

const N = Number(process.env.BENCH_N ?? 10_000);
const W = Number(process.env.BENCH_W ?? 32);
const FUSED = process.env.BENCH_FUSED === '1';
const BASE = process.env.BENCH_BASE_DIST;
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const TICKS = 100; // USER_HZ: /proc CPU times are in 1/100 s

// User + system ticks of a process (all its threads).
function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

interface Run { cycles: number; seconds: number; p50: number; p99: number; clientUs: number; serverUs: number }

async function once(dist: string): Promise<Run> {
  const server = await startSvc({ command: { mode: 'dist', argv: [join(dist, 'cli', 'main.js')] } });
  try {
    await seedTasks(server, 3000, 'warmup', 1000, 'warmup');
    { const { steps, close } = svcSteps(server, 'warmup', 32); await runLoop(steps, 32); close(); }
    await seedTasks(server, N, 'bench');
    await waitSettled(server);
    const s0 = cpuTicks(server.pid);
    const c0 = process.cpuUsage();
    const { steps, close } = svcSteps(server, 'bench', W, FUSED);
    const r = await runLoop(steps, W);
    close();
    const c = process.cpuUsage(c0);
    const serverUs = ((cpuTicks(server.pid) - s0) * 1e6) / TICKS / r.cycles;
    return { cycles: r.cycles, seconds: r.seconds, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), clientUs: (c.user + c.system) / r.cycles, serverUs };
  } finally {
    await server.stop();
    server.repo.cleanup();
  }
}

const line = (side: string, r: Run) =>
  `${side} ${FUSED ? 'fused' : 'two-request'} W=${W} N=${N}: ${(r.cycles / r.seconds).toFixed(0)} cycles/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; ` +
  `CPU per cycle: client ${r.clientUs.toFixed(0)} µs, server ${r.serverUs.toFixed(0)} µs, server/client ${(r.serverUs / r.clientUs).toFixed(2)}`;

const mine = join(PROJECT, 'dist');
if (!BASE) {
  console.log(line('this build', await once(mine)));
} else {
  const ratios: Record<'A' | 'B', number[]> = { A: [], B: [] };
  for (let i = 0; i < PAIRS; i++) {
    for (const [side, dist] of [['A', BASE], ['B', mine]] as const) {
      const r = await once(dist);
      ratios[side].push(r.serverUs / r.clientUs);
      console.log(line(side, r));
    }
  }
  const a = median(ratios.A);
  const b = median(ratios.B);
  console.log(`median server/client CPU: A (${BASE}) ${a.toFixed(2)}, B (this build) ${b.toFixed(2)}: B/A ${(b / a).toFixed(3)}`);
}
