// Benchmark of `svc compliance check` over a big board: 100k tasks (with their EU AI Act records) and a
// year of audit segments (~1,400 chained records a day). Target: under 2 s. Baseline measured in the same
// run: `verifyAudit` alone (the HMAC walk check cannot skip). Run: npm run bench:compliance
// BENCH_TASKS, BENCH_DAYS and BENCH_PER_DAY scale it down for a quick look.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runCheck } from '../src/compliance/index.ts';
import { verifyAudit } from '../src/observe/index.ts';
import { sddLayout } from '../src/store/index.ts';
import { PROJECT, svcArgv } from '../test/helpers/server.ts';
import { makeRepo } from '../test/helpers/repo.ts';
import { FIXTURE_KEY, days, writeAudit, writeTasks } from './lib/compliance-tree.ts';
import { median, num, table } from './lib/stats.ts';

const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 1_400);
const RUNS = 3;
const TARGET_MS = 2_000;

const repo = makeRepo('svc-bench-compliance-');
const layout = sddLayout(repo.dir);
const t0 = performance.now();
const ids = writeTasks(layout.sdd, TASKS, Date.parse('2025-01-15T00:00:00Z'));
const records = writeAudit(layout.sdd, FIXTURE_KEY, days('2025-01-15', DAYS), PER_DAY, ids);
console.log(`seeded ${num(TASKS)} tasks and ${num(records)} audit records in ${DAYS} segments (${num((performance.now() - t0) / 1000, 1)} s)`);
spawnSync('sync');

const asOf = Date.parse('2026-01-15T00:00:00Z');
const CACHE = join(layout.runtime, 'compliance', 'audit-verified.json');
const time = async (fn: () => Promise<unknown>) => { const s = performance.now(); await fn(); return performance.now() - s; };
const check = () => runCheck(layout, { flags: {}, failOn: 'critical', asOf });
await check(); // warm-up: page cache and JIT
const verify: number[] = [];
const cold: number[] = [];
const warm: number[] = [];
for (let i = 0; i < RUNS; i++) {
  verify.push(await time(() => verifyAudit(layout)));
  rmSync(CACHE, { force: true });
  cold.push(await time(check));
  warm.push(await time(check));
}
// The whole command as a user runs it, in a new process: the built CLI when `npm run build` made one, else through tsx.
const built = existsSync(join(PROJECT, 'dist', 'cli', 'main.js'));
const argv = built ? [join(PROJECT, 'dist', 'cli', 'main.js')] : svcArgv();
const cli: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const s = performance.now();
  const r = spawnSync(process.execPath, [...argv, 'compliance', 'check', '--fail-on', 'none', '--as-of', '2026-01-15', '--workdir', repo.dir], { cwd: PROJECT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  cli.push(performance.now() - s);
}
const out = await check();
console.log(`check: ${out.summary.total} policies, ${out.summary.evidence.evidenced} evidenced, audit_hmac_chain=${String(out.results.find((r) => r.policy_id === 'soc2-cc7-02')?.inputs.audit_hmac_chain)}, audit_retention_days=${String(out.results.find((r) => r.policy_id === 'soc2-cc7-03')?.inputs.audit_retention_days)}`);
const row = (name: string, xs: number[]) => [name, num(median(xs), 0), num(Math.min(...xs), 0), num(Math.max(...xs), 0), num(median(xs) / median(verify), 2)];
console.log(table(['measure', 'median ms', 'min ms', 'max ms', 'ratio to verify'], [
  row('verifyAudit alone, full walk (baseline)', verify),
  row('check, first run (no remembered segments)', cold),
  row('check, segments remembered from an earlier check', warm),
  row(`svc compliance check, new process (${built ? 'dist' : 'tsx'}), remembered`, cli),
]));
console.log(median(cli) <= TARGET_MS ? `target met (remembered segments, new process): ${num(median(cli), 0)} ms <= ${TARGET_MS} ms` : `TARGET MISSED: ${num(median(cli), 0)} ms > ${TARGET_MS} ms`);
console.log(`first check (full walk of ${num(records)} records): ${num(median(cold), 0)} ms`);
repo.cleanup();
