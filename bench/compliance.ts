// Benchmark of `svc compliance check` over a big board: 100k tasks (with their EU AI Act records) and a
// year of audit segments (~1,400 chained records a day). Target: under 2 s. Baseline measured in the same
// run: `verifyAudit` alone (the HMAC walk check cannot skip). Run: npm run bench:compliance
// BENCH_TASKS, BENCH_DAYS and BENCH_PER_DAY scale it down for a quick look.
import { spawnSync } from 'node:child_process';
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
const RUNS = 5;
const TARGET_MS = 2_000;

const repo = makeRepo('svc-bench-compliance-');
const layout = sddLayout(repo.dir);
const t0 = performance.now();
const ids = writeTasks(layout.sdd, TASKS, Date.parse('2025-01-15T00:00:00Z'));
const records = writeAudit(layout.sdd, FIXTURE_KEY, days('2025-01-15', DAYS), PER_DAY, ids);
console.log(`seeded ${num(TASKS)} tasks and ${num(records)} audit records in ${DAYS} segments (${num((performance.now() - t0) / 1000, 1)} s)`);
spawnSync('sync');

const asOf = Date.parse('2026-01-15T00:00:00Z');
const time = async (fn: () => Promise<unknown>) => { const s = performance.now(); await fn(); return performance.now() - s; };
await runCheck(layout, { flags: {}, failOn: 'critical', asOf }); // warm-up: page cache and JIT
const verify: number[] = [];
const check: number[] = [];
for (let i = 0; i < RUNS; i++) {
  verify.push(await time(() => verifyAudit(layout)));
  check.push(await time(() => runCheck(layout, { flags: {}, failOn: 'critical', asOf })));
}
// The whole command as a user runs it: a fresh process (tsx start-up included), in-process figures above.
const cli: number[] = [];
for (let i = 0; i < 3; i++) {
  const s = performance.now();
  const r = spawnSync(process.execPath, svcArgv('compliance', 'check', '--fail-on', 'none', '--as-of', '2026-01-15', '--workdir', repo.dir), { cwd: PROJECT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  cli.push(performance.now() - s);
}
const out = await runCheck(layout, { flags: {}, failOn: 'critical', asOf });
console.log(`check: ${out.summary.total} policies, ${out.summary.evidence.evidenced} evidenced, audit_retention_days=${out.results.find((r) => r.policy_id === 'soc2-cc7-03')?.inputs.audit_retention_days}`);
console.log(table(['measure', 'median ms', 'min ms', 'max ms', 'ratio to verify'], [
  ['verifyAudit alone (baseline)', num(median(verify), 0), num(Math.min(...verify), 0), num(Math.max(...verify), 0), '1.00'],
  ['runCheck (in process)', num(median(check), 0), num(Math.min(...check), 0), num(Math.max(...check), 0), num(median(check) / median(verify), 2)],
  ['svc compliance check (new process)', num(median(cli), 0), num(Math.min(...cli), 0), num(Math.max(...cli), 0), num(median(cli) / median(verify), 2)],
]));
console.log(median(cli) <= TARGET_MS ? `target met: ${num(median(cli), 0)} ms <= ${TARGET_MS} ms` : `TARGET MISSED: ${num(median(cli), 0)} ms > ${TARGET_MS} ms`);
repo.cleanup();
