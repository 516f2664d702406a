// Where one task loop's CPU goes, and an A/B of two builds that holds on a machine whose speed drifts.
//
// Each run: a `dist/` server (svc up --no-orchestrator in a temp repo), 3,000 warm-up cycles at W = 32, N
// tasks seeded and settled, then one loop of W clients (two requests per cycle, or the fused
// complete?next= with BENCH_FUSED=1). Printed per run: cycles/s, p50/p99, the client's CPU per cycle
// (process.cpuUsage), the server's per cycle (/proc/<pid>/stat, all its threads), and the server's in units of
// a fixed piece of work timed on this machine just before and after the loop (a record's JSON written and
// read back, 20,000 times; the faster of two tries each time), and against the client's (the same code for both
// builds). On a shared VM whose cycles/s move by 2x within minutes, these quotients move less (still ±15% on a
// bad day): medians of interleaved pairs tell builds apart by a tenth or more, not by a few per cent.
//
// BENCH_BASE_DIST=<folder>: alternate runs of that build (A; e.g. a worktree of an older commit, built) and
// this checkout's dist/ (B), BENCH_PAIRS pairs (default 3), and print the median of each side.
// BENCH_A_FLAGS / BENCH_B_FLAGS: node flags of each side's server (e.g. BENCH_BASE_DIST=dist
// BENCH_B_FLAGS=--max-semi-space-size=32 compares one build with and without a flag).
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
const flags = (side: 'A' | 'B') => (process.env[`BENCH_${side}_FLAGS`] ?? '').split(' ').filter(Boolean);
const TICKS = 100; // USER_HZ: /proc CPU times are in 1/100 s

// User + system ticks of a process (all its threads).
function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

interface Run { cycles: number; seconds: number; p50: number; p99: number; clientUs: number; serverUs: number; unitUs: number }

// The calibration work: a task-sized record through JSON.stringify and JSON.parse, 20,000 times.
const RECORD = { id: '01kc0000000000000000000000', title: 'calibrate the machine', description: 'x'.repeat(600), status: 'open', version: 3, depends_on: [], metadata: { a: 1, b: 'two' }, claimed_at: null, created_at: '2026-12-07T20:00:00.000Z' };
function unitUs(): number {
  let best = Infinity;
  for (let t = 0; t < 2; t++) {
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (let i = 0; i < 20_000; i++) n += (JSON.parse(JSON.stringify(RECORD)) as { version: number }).version;
    if (n !== 60_000) throw new Error('calibration');
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1000);
  }
  return best;
}

async function once(dist: string, nodeArgs: string[] = []): Promise<Run> {
  const server = await startSvc({ command: { mode: 'dist', argv: [join(dist, 'cli', 'main.js')] }, nodeArgs });
  try {
    await seedTasks(server, 3000, 'warmup', 1000, 'warmup');
    { const { steps, close } = svcSteps(server, 'warmup', 32); await runLoop(steps, 32); close(); }
    await seedTasks(server, N, 'bench');
    await waitSettled(server);
    await new Promise((r) => setTimeout(r, 1000)); // the settled server's last checkpoint and GC, outside the window
    const before = unitUs();
    const s0 = cpuTicks(server.pid);
    const c0 = process.cpuUsage();
    const { steps, close } = svcSteps(server, 'bench', W, FUSED);
    const r = await runLoop(steps, W);
    close();
    const c = process.cpuUsage(c0);
    const serverUs = ((cpuTicks(server.pid) - s0) * 1e6) / TICKS / r.cycles;
    return {
      cycles: r.cycles, seconds: r.seconds, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99),
      clientUs: (c.user + c.system) / r.cycles, serverUs, unitUs: (before + unitUs()) / 2,
    };
  } finally {
    await server.stop();
    server.repo.cleanup();
  }
}

const line = (side: string, r: Run) =>
  `${side} ${FUSED ? 'fused' : 'two-request'} W=${W} N=${N}: ${(r.cycles / r.seconds).toFixed(0)} cycles/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; ` +
  `CPU per cycle: client ${r.clientUs.toFixed(0)} µs, server ${r.serverUs.toFixed(0)} µs; calibration ${(r.unitUs / 1000).toFixed(1)} ms; ` +
  `server per cycle in calibrations ${(1000 * r.serverUs / r.unitUs).toFixed(2)}‰, server/client ${(r.serverUs / r.clientUs).toFixed(2)}`;

const mine = join(PROJECT, 'dist');
if (!BASE) {
  console.log(line('this build', await once(mine, flags('B'))));
} else {
  const per: Record<'A' | 'B', { unit: number[]; client: number[] }> = { A: { unit: [], client: [] }, B: { unit: [], client: [] } };
  for (let i = 0; i < PAIRS; i++) {
    for (const [side, dist] of [['A', BASE], ['B', mine]] as const) {
      const r = await once(dist, flags(side));
      per[side].unit.push(r.serverUs / r.unitUs);
      per[side].client.push(r.serverUs / r.clientUs);
      console.log(line(side, r));
    }
  }
  for (const [what, key] of [['server CPU per cycle in calibrations', 'unit'], ['server/client CPU', 'client']] as const) {
    const a = median(per.A[key]);
    const b = median(per.B[key]);
    const named = (side: 'A' | 'B', name: string) => `${name}${flags(side).length ? ' ' + flags(side).join(' ') : ''}`;
    console.log(`median ${what}: A (${named('A', BASE)}) ${a.toFixed(4)}, B (${named('B', 'this build')}) ${b.toFixed(4)}: B/A ${(b / a).toFixed(3)}`);
  }
}
