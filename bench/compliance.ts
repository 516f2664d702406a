// Benchmark of `svc compliance check` over a big board: 100k tasks (with their EU AI Act records) and a
// year of audit segments (~1,400 chained records a day). Target: a first (cold) check under 2 s, as a
// user runs it: a new process, nothing remembered. Baseline measured in the same run: the walk before
// threads and the fast canonical form (one thread, canonicalize + createHmac per record).
// Run: npm run bench:compliance. BENCH_TASKS, BENCH_DAYS, BENCH_PER_DAY scale it down; BENCH_RUNS rounds.
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { runCheck } from '../src/compliance/index.ts';
import { loadAuditKey } from '../src/observe/index.ts';
import { sddLayout } from '../src/store/index.ts';
import { PROJECT } from '../test/helpers/server.ts';
import { makeRepo } from '../test/helpers/repo.ts';
import { FIXTURE_KEY, days, referenceWalk, writeAudit, writeTasks } from './lib/compliance-tree.ts';
import { serverCommand } from './lib/svc-server.ts';
import { median, num, table } from './lib/stats.ts';

const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 1_400);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const REFERENCE_RUNS = Math.min(RUNS, 3); // the baseline takes 5-20 s a walk
const TARGET_MS = 2_000;

if (serverCommand().mode !== 'dist') {
  process.stdout.write('dist/ is older than src/: building it first (npm run build)\n');
  execFileSync('npm', ['run', 'build'], { cwd: PROJECT, stdio: 'inherit' });
}
// The verifier as built, so its worker threads run compiled modules as the CLI's do (not through tsx).
const { verifyAudit } = await import(pathToFileURL(join(PROJECT, 'dist', 'observe', 'index.js')).href) as typeof import('../src/observe/index.ts');
const repo = makeRepo('svc-bench-compliance-');
const empty = makeRepo('svc-bench-compliance-empty-');
const layout = sddLayout(repo.dir);
const t0 = performance.now();
const ids = writeTasks(layout.sdd, TASKS, Date.parse('2025-01-15T00:00:00Z'));
const records = writeAudit(layout.sdd, FIXTURE_KEY, days('2025-01-15', DAYS), PER_DAY, ids);
console.log(`seeded ${num(TASKS)} tasks and ${num(records)} audit records in ${DAYS} segments (${num((performance.now() - t0) / 1000, 1)} s)`);
spawnSync('sync');

const CACHE = join(layout.runtime, 'compliance');
const key = await loadAuditKey(layout, { create: false });
type Run = { wall: number; cpu: number };
// In this process: wall time and CPU time of all its threads.
const inProcess = async (fn: () => unknown): Promise<Run> => {
  const c = process.cpuUsage();
  const s = performance.now();
  await fn();
  const u = process.cpuUsage(c);
  return { wall: performance.now() - s, cpu: (u.user + u.system) / 1000 };
};
// The built CLI in a new process; its CPU time (user + system, all threads) from the shell's `times`.
const cli = (dir: string): Run => {
  const argv = [join(PROJECT, 'dist', 'cli', 'main.js'), 'compliance', 'check', '--fail-on', 'none', '--as-of', '2026-01-15', '--workdir', dir];
  const s = performance.now();
  const r = spawnSync('/bin/sh', ['-c', '"$@" >/dev/null; s=$?; times >&2; exit $s', 'sh', process.execPath, ...argv], { cwd: PROJECT, encoding: 'utf8' });
  const wall = performance.now() - s;
  if (r.status !== 0) throw new Error(r.stderr);
  const child = r.stderr.trim().split('\n').at(-1)!.split(/\s+/).map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t)!; return Number(m[1]) * 60_000 + Number(m[2]) * 1000; });
  return { wall, cpu: child[0]! + child[1]! };
};

await runCheck(layout, { flags: {}, failOn: 'critical', asOf: Date.parse('2026-01-15T00:00:00Z') }); // warm-up: page cache and JIT
const rows: Record<string, Run[]> = {};
const add = (name: string, r: Run) => (rows[name] ??= []).push(r);
const loads: number[] = [loadavg()[0]!];
for (let i = 0; i < RUNS; i++) {
  if (i < REFERENCE_RUNS) add('reference: one thread, canonicalize + createHmac per record (before)', await inProcess(() => referenceWalk(layout.auditDir, key)));
  add('verifyAudit, one thread (fast canonical form and HMAC)', await inProcess(() => verifyAudit(layout, { key, threads: 0 })));
  add(`verifyAudit, segments on ${availableParallelism()} worker threads`, await inProcess(() => verifyAudit(layout, { key, threads: availableParallelism() })));
  rmSync(CACHE, { recursive: true, force: true });
  add('svc compliance check, new process, first check (cold)', cli(repo.dir));
  add('svc compliance check, new process, segments remembered', cli(repo.dir));
  add('svc compliance check, new process, empty tree (fixed cost)', cli(empty.dir));
  loads.push(loadavg()[0]!);
}
const out = await runCheck(layout, { flags: {}, failOn: 'critical', asOf: Date.parse('2026-01-15T00:00:00Z') });
console.log(`check: ${out.summary.total} policies, ${out.summary.evidence.evidenced} evidenced, audit_hmac_chain=${String(out.results.find((r) => r.policy_id === 'soc2-cc7-02')?.inputs.audit_hmac_chain)}, audit_retention_days=${String(out.results.find((r) => r.policy_id === 'soc2-cc7-03')?.inputs.audit_retention_days)}`);
const base = median(Object.values(rows)[0]!.map((r) => r.wall));
console.log(table(['measure', 'median ms', 'min ms', 'max ms', 'median CPU ms', 'runs', 'ratio to reference'], Object.entries(rows).map(([name, rs]) => {
  const w = rs.map((r) => r.wall);
  return [name, num(median(w)), num(Math.min(...w)), num(Math.max(...w)), num(median(rs.map((r) => r.cpu))), String(rs.length), num(median(w) / base, 2)];
})));
const cold = rows['svc compliance check, new process, first check (cold)']!;
const coldMs = median(cold.map((r) => r.wall));
console.log(`load average (1 min) over the rounds: ${loads.map((l) => num(l, 1)).join(', ')} on ${availableParallelism()} cores`);
console.log(coldMs <= TARGET_MS
  ? `target met: a first check of ${num(records)} records in a new process, median ${num(coldMs)} ms <= ${TARGET_MS} ms`
  : `TARGET MISSED: a first check of ${num(records)} records in a new process, median ${num(coldMs)} ms > ${TARGET_MS} ms (CPU ${num(median(cold.map((r) => r.cpu)))} ms, load ${num(median(loads), 1)})`);
repo.cleanup();
empty.cleanup();
