// Claim throughput: N tasks, W concurrent clients loop "next → complete" until the queue is empty, on svc
// (a real `svc up` child over HTTP) and on BullMQ (a private redis-server, without persistence and with
// `appendfsync always`, which acknowledges durably as svc does). Run: npm run bench:claims
// Env: BENCH_SIZES=1000,10000 and BENCH_WORKERS=32 narrow the grid; BENCH_RUNS (default 3) runs per
// headline cell; BENCH_WARMUP (default 3000) warm-up cycles before each measured loop; BENCH_CAP_S
// (default 30) caps the slow small-W cells; BENCH_PROFILE=1 writes a --cpu-prof of each svc server to
// bench/results/; BENCH_SERVER=dist|tsx forces how the server runs (default: dist/ when it is newer
// than src/, else tsx); BENCH_BASELINE_W1 (default 331) is the W = 1 figure the targets compare with;
// BENCH_NODE_FLAGS adds node flags to a dist/ server (e.g. --max-semi-space-size=4); BENCH_FUSED=0
// leaves out the svc-fused rows (the loop as one request per cycle: complete?next=<role>, N ≤ 10k).
// Client and servers share this machine's cores.
import { loadavg } from 'node:os';
import { cpus } from 'node:os';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { bullmqSteps, redisVersion, seedJobs, startRedis, type RedisPersistence } from './lib/bullmq.ts';
import { runLoop, type CycleSteps, type LoopResult } from './lib/loop.ts';
import { median, num, peakRssMiB, percentile, table } from './lib/stats.ts';
import { PROJECT, seedTasks, serverCommand, startSvc, svcSteps, waitSettled, type SvcServer } from './lib/svc-server.ts';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,8,32').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CAP_S = Number(process.env.BENCH_CAP_S ?? 30);
const PROFILE = process.env.BENCH_PROFILE === '1';
const FUSED = process.env.BENCH_FUSED !== '0';
const HEADLINE = { n: 10_000, w: 32 };
// cycles/s at N = 10k, W = 1 before write path v2 (issue 12): one datasync per change, not three.
const BASELINE_W1 = Number(process.env.BENCH_BASELINE_W1 ?? 331);
let startSeconds: number | undefined;
let startRssMiB: number | undefined; // the restarted server's VmHWM once it listens (the start's own peak)
// Decided once, so every cell runs the same build even if src/ changes during the run.
const COMMAND = serverCommand(process.env.BENCH_SERVER);
const ROLE = 'bench';
// Warm-up cycles before each measured loop (own queue, not counted) and a pause for the seed's state commit.
// A fresh svc server runs its first ~2,000 cycles at about 60% of its later speed (JIT; measured with
// bench/README.md "Warm-up"), so each measured loop, at every N and on BullMQ alike, follows 3,000.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const SETTLE_MS = 300;
// The warm-up runs with this many clients whatever W is measured (3,000 cycles at W = 1 would take half a minute).
const WARMUP_WORKERS = 32;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type System = 'svc' | 'svc-fused' | 'bullmq' | 'bullmq-aof';
interface Cell { system: System; n: number; w: number; runs: LoopResult[]; rss: number[]; seedS: number[]; settleS: number[]; note: string }
const cells: Cell[] = [];
const cleanups: (() => void)[] = [];
const progress = (msg: string) => process.stderr.write(`[bench:claims] ${msg}\n`);

/** How a cell is run: full drains of a fresh queue, `runs` times, up to N = 10k; one server at 100k (svcBigCell). */
function planFor(n: number, w: number): { runs: number; cap: number } {
  if (n <= HEADLINE.n) return { runs: RUNS, cap: Infinity };
  return { runs: 1, cap: w < 32 ? CAP_S : Infinity };
}

// `note` is kept when the loop drained the queue; a capped loop says how far it got.
// `settleS`: seconds after the loop until svc had every acknowledged write on its file and in the ref.
function record(system: System, n: number, w: number, r: LoopResult, rss: number, seedS: number, note = '', settleS?: number): void {
  let cell = cells.find((c) => c.system === system && c.n === n && c.w === w);
  if (!cell) cells.push((cell = { system, n, w, runs: [], rss: [], seedS: [], settleS: [], note }));
  cell.runs.push(r);
  cell.rss.push(rss);
  cell.seedS.push(seedS);
  if (settleS !== undefined) cell.settleS.push(settleS);
  cell.note = r.capped ? `capped at ${Math.round(r.seconds)} s: ${num(r.cycles)} of ${num(n)} cycles` : note;
  progress(`${system} N=${num(n)} W=${w}: ${num(r.cycles / r.seconds)} cycles/s, p99 ${num(percentile(r.latencies, 99), 1)} ms${r.capped ? ' (capped)' : ''}`);
}

async function svcServer(): Promise<SvcServer> {
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROJECT, 'bench', 'results')}`] : [];
  const server = await startSvc({ nodeArgs, command: COMMAND });
  // Deleting 100k files on this VM (ext4 with online discard) slows later fsyncs: delete at the very end.
  cleanups.push(() => server.repo.cleanup());
  return server;
}

async function svcLoop(server: SvcServer, role: string, w: number, cap: number, fused = false, maxCycles = Infinity): Promise<LoopResult> {
  const { steps, close } = svcSteps(server, role, w, fused);
  try { return await runLoop(steps, w, cap, maxCycles); } finally { close(); }
}

/** Seconds until the writes acknowledged by the loop are all on their files and in refs/sdd/state. */
async function settleSeconds(server: SvcServer): Promise<number> {
  const t0 = Date.now();
  return (await waitSettled(server, { journal: false }) - t0) / 1000;
}

/**
 * Warm-up (JIT, sockets) on a queue of its own, then seed N and wait until the seed is on its files and
 * in refs/sdd/state; the seed's seconds count until then.
 */
async function svcPrepare(server: SvcServer, n: number): Promise<number> {
  await seedTasks(server, WARMUP, 'warmup', 1000, 'warmup');
  await svcLoop(server, 'warmup', WARMUP_WORKERS, Infinity);
  const t0 = Date.now();
  await seedTasks(server, n, ROLE);
  await waitSettled(server);
  await sleep(SETTLE_MS);
  return (Date.now() - t0) / 1000;
}

/** One svc run at N ≤ 10k: a fresh server and queue; `fused`: one request per cycle (complete?next=). */
async function svcRun(n: number, w: number, fused = false): Promise<void> {
  const server = await svcServer();
  try {
    const seedS = await svcPrepare(server, n);
    const r = await svcLoop(server, ROLE, w, planFor(n, w).cap, fused);
    const settleS = await settleSeconds(server);
    record(fused ? 'svc-fused' : 'svc', n, w, r, await peakRssMiB(server.pid), seedS, fused ? 'complete?next=' : '', settleS);
  } finally {
    await server.stop();
  }
}

/**
 * svc at 100k: one seeded server (seeding takes a minute); W < 32 run capped on the full queue (CAP_S, and at most
 * N / 2 cycles between them, so W = 32 keeps half the queue however fast they are), then W = 32 drains the rest.
 */
async function svcBigCell(n: number, ws: number[]): Promise<void> {
  const server = await svcServer();
  try {
    const seedS = await svcPrepare(server, n);
    for (const w of [...ws].sort((a, b) => a - b)) {
      const last = w === Math.max(...ws);
      const r = await svcLoop(server, ROLE, w, last ? Infinity : CAP_S, false, last ? Infinity : Math.floor(n / 2 / (ws.length - 1)));
      const settleS = await settleSeconds(server);
      record('svc', n, w, r, await peakRssMiB(server.pid), seedS, last ? `same server, after the capped cells: drained the other ${num(r.cycles)}` : '', settleS);
    }
    // Start with N tasks: a clean stop, then the time from spawn until the server listens.
    await server.stop();
    const t0 = Date.now();
    const again = await startSvc({ repo: server.repo, command: COMMAND });
    startSeconds = (Date.now() - t0) / 1000;
    startRssMiB = await peakRssMiB(again.pid);
    progress(`svc restart with ${num(n)} tasks: ${num(startSeconds, 2)} s until it listens, peak RSS ${num(startRssMiB)} MiB`);
    await again.stop();
  } finally {
    await server.stop();
  }
}

/** One BullMQ run: a fresh redis-server (its VmHWM is this loop's), warm-up queue first, the same plan as svc. */
async function bullRun(n: number, w: number, persistence: RedisPersistence): Promise<void> {
  const system: System = persistence === 'none' ? 'bullmq' : 'bullmq-aof';
  const redis = await startRedis(persistence);
  try {
    const connection = { host: '127.0.0.1', port: redis.port };
    const warm = new Queue('warmup', { connection });
    const queue = new Queue('bench', { connection });
    const wu = await bullmqSteps(warm.name, redis.port, WARMUP_WORKERS);
    await seedJobs(warm, WARMUP);
    await runLoop(wu.steps as CycleSteps<unknown>, WARMUP_WORKERS).finally(wu.close);
    const seedS = await seedJobs(queue, n);
    const b = await bullmqSteps(queue.name, redis.port, w);
    const r = await runLoop(b.steps as CycleSteps<unknown>, w, planFor(n, w).cap).finally(b.close);
    record(system, n, w, r, await peakRssMiB(redis.pid), seedS, persistence === 'none' ? '' : 'appendfsync always');
    await Promise.all([warm.close(), queue.close()]);
  } finally {
    await redis.stop();
  }
}

/**
 * N ≤ 10k: the runs of every system interleaved (run i of svc, svc-fused, BullMQ and BullMQ with
 * `appendfsync always` at each W, then run i + 1), so a ratio compares loops minutes apart, not a shared
 * machine's quiet quarter of an hour with its busy one.
 */
async function smallCells(n: number, redis: boolean): Promise<void> {
  for (let i = 0; i < RUNS; i++) {
    for (const w of WORKERS) {
      await svcRun(n, w);
      if (FUSED) await svcRun(n, w, true);
      if (redis) { await bullRun(n, w, 'none'); await bullRun(n, w, 'aof-always'); }
    }
  }
}

const cps = (c: Cell) => median(c.runs.map((r) => r.cycles / r.seconds));
const p = (c: Cell, q: number) => median(c.runs.map((r) => percentile(r.latencies, q)));
const find = (system: System, n: number, w: number) => cells.find((c) => c.system === system && c.n === n && c.w === w);

function printResults(redisVer: string | undefined): void {
  const rows = cells.map((c) => [c.system, num(c.n), String(c.w), String(c.runs.length), num(cps(c)), num(p(c, 50), 2), num(p(c, 99), 2), num(median(c.rss)), num(median(c.seedS), 1), c.settleS.length ? num(median(c.settleS), 2) : '–', c.note]);
  console.log('\nper cell (medians over runs; latency = each request, next and complete; RSS = server VmHWM;');
  console.log('seed s = creating N until on files and in the ref; settle s = after the last cycle until every write is on its file and in the ref)\n');
  console.log(table(['system', 'N', 'W', 'runs', 'cycles/s', 'p50 ms', 'p99 ms', 'peak RSS MiB', 'seed s', 'settle s', 'note'], rows));
  const cmp = cells.filter((c) => c.system === 'svc' || c.system === 'svc-fused').map((c) => {
    const b = find('bullmq', c.n, c.w);
    const a = find('bullmq-aof', c.n, c.w);
    return [c.system, num(c.n), String(c.w), num(cps(c)), a ? num(cps(a)) : '–', a ? num(cps(c) / cps(a), 2) : '–', b ? num(cps(b)) : '–', b ? num(cps(c) / cps(b), 3) : '–',
      num(p(c, 99), 1), a ? num(p(a, 99), 1) : '–', num(median(c.rss)), a ? num(median(a.rss)) : '–'];
  });
  console.log('\nsvc against BullMQ: `appendfsync always` (durable before the reply, as svc) and without persistence\n');
  console.log(table(['svc loop', 'N', 'W', 'svc cycles/s', 'BullMQ AOF cycles/s', 'svc/AOF', 'BullMQ cycles/s', 'svc/BullMQ', 'svc p99 ms', 'AOF p99 ms', 'svc RSS MiB', 'redis AOF RSS MiB'], cmp));
  printTargets();
  console.log(`\nmachine: ${cpus().length} vCPU (${cpus()[0]?.model ?? '?'}), Node ${process.version}, redis-server ${redisVer ?? 'absent (BullMQ rows skipped)'}; server from ${COMMAND.mode}; client and servers on the same machine`);
}

function printTargets(): void {
  const check = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const one = find('svc', HEADLINE.n, 1);
  const head = find('svc', HEADLINE.n, HEADLINE.w);
  const big = [...cells].reverse().find((c) => c.system === 'svc' && c.n === 100_000);
  console.log('\ntargets (issue 12)');
  if (one) console.log(`  N = 10k, W = 1: ${num(cps(one))} cycles/s = ${num(cps(one) / BASELINE_W1, 2)}× the ${num(BASELINE_W1)} before (target ≥ 3×: ${check(cps(one) >= 3 * BASELINE_W1)})`);
  if (head) {
    console.log(`  N = 10k, W = 32: ${num(cps(head))} cycles/s (target ≥ 3,000: ${check(cps(head) >= 3000)}), p99 ${num(p(head, 99), 1)} ms (target < 20: ${check(p(head, 99) < 20)})`);
    // The same runs, counting the time until their last write was on its file and in refs/sdd/state.
    const settled = median(head.runs.map((r, i) => r.cycles / (r.seconds + (head.settleS[i] ?? 0))));
    console.log(`  N = 10k, W = 32, counting the settle time: ${num(settled)} cycles/s`);
  }
  const fusedHead = find('svc-fused', HEADLINE.n, HEADLINE.w);
  const aof = find('bullmq-aof', HEADLINE.n, HEADLINE.w);
  if (fusedHead) console.log(`  N = 10k, W = 32, fused (complete?next=): ${num(cps(fusedHead))} cycles/s (target ≥ 5,000: ${check(cps(fusedHead) >= 5000)}), p99 ${num(p(fusedHead, 99), 1)} ms (target < 20: ${check(p(fusedHead, 99) < 20)})`);
  for (const c of [head, fusedHead]) if (c && aof) console.log(`  ${c.system} / BullMQ appendfsync always at N = 10k, W = 32: ${num(cps(c) / cps(aof), 2)}× (goal ≥ 1.0×)`);
  if (big) console.log(`  N = 100k: peak RSS ${num(Math.max(...cells.filter((c) => c.system === 'svc' && c.n === 100_000).flatMap((c) => c.rss)))} MiB (target < 300: ${check(Math.max(...cells.filter((c) => c.system === 'svc' && c.n === 100_000).flatMap((c) => c.rss)) < 300)})`);
  if (startSeconds !== undefined) console.log(`  start with 100k tasks: ${num(startSeconds, 2)} s until it listens (target < 3: ${check(startSeconds < 3)}); the start's own peak RSS ${num(startRssMiB ?? NaN)} MiB`);
  console.log(`  load average at the end of the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the machine is shared: figures move with it)`);
}

async function main(): Promise<void> {
  const redisVer = redisVersion();
  if (PROFILE) mkdirSync(join(PROJECT, 'bench', 'results'), { recursive: true });
  progress(`svc from ${COMMAND.mode}; sizes ${SIZES.join(', ')}; workers ${WORKERS.join(', ')}; ${RUNS} runs per headline cell; load average ${loadavg()[0]!.toFixed(2)}`);
  if (!redisVer) progress('redis-server not found: BullMQ rows skipped (apt-get install -y redis-server)');
  const t0 = Date.now();
  try {
    for (const n of SIZES) {
      if (n <= HEADLINE.n) { await smallCells(n, Boolean(redisVer)); continue; }
      await svcBigCell(n, WORKERS);
      if (redisVer) for (const persistence of ['none', 'aof-always'] as const) for (const w of WORKERS) await bullRun(n, w, persistence);
    }
    printResults(redisVer);
    console.log(`total ${num((Date.now() - t0) / 1000)} s`);
  } finally {
    for (const c of cleanups) c();
  }
}

await main();
