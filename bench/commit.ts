// Benchmark of the state committer: latency of "change one task file → flush" with 1k, 10k and 100k
// tasks in refs/sdd/state, plus recover() on an unchanged 100k tree. Run: npm run bench:commit
// Seeding: the task files are written straight to disk, then the first state commit is built by one
// `git fast-import` process (objects land in one pack, as after a gc), so seeding 100k takes seconds;
// then `sync`, so the timed fsyncs do not pay for writing back the seed's dirty pages.
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/lib/clock.ts';
import { silentLogger } from '../src/lib/log.ts';
import { createCommitter } from '../src/store/committer.ts';
import { createGit } from '../src/store/git-cli.ts';
import { ulidIds } from '../src/store/ids.ts';
import { stableStringify } from '../src/store/records/cas.ts';
import { sddLayout, shardedRel, type SddLayout } from '../src/store/layout.ts';
import { createRecordStore } from '../src/store/records/shared.ts';
import { makeRepo, type TempRepo } from '../test/helpers/repo.ts';

// BENCH_SIZES=1000,100000 narrows the sizes for a quick look; the table in bench/README.md uses all three.
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const RUNS = 3;
const WARMUPS = 5;
const ITERATIONS = 30;

type Task = { version: number; id: string; title: string; status: string; priority: number; counter: number };
const taskOf = (id: string, i: number): Task => ({ version: 1, id, title: `benchmark task ${i}`, status: 'open', priority: i % 5, counter: 0 });

/** Write N task files and commit them all as the first state commit with one `git fast-import`. */
async function seed(root: string, layout: SddLayout, n: number): Promise<string[]> {
  const ids = ulidIds();
  const tasks = Array.from({ length: n }, (_, i) => ({ rel: shardedRel('tasks', ids.next(), '.json'), body: '' }));
  tasks.forEach((t, i) => (t.body = stableStringify(taskOf(t.rel.split('/').pop()!.slice(0, -5), i))));
  await Promise.all([...new Set(tasks.map((t) => dirname(`${layout.sdd}/${t.rel}`)))].map((d) => mkdir(d, { recursive: true })));
  for (let i = 0; i < tasks.length; i += 256) await Promise.all(tasks.slice(i, i + 256).map((t) => writeFile(`${layout.sdd}/${t.rel}`, t.body)));
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: root, stdio: ['pipe', 'inherit', 'inherit'] });
  const msg = `seed ${n} tasks`;
  const chunks = [`commit refs/sdd/state\ncommitter svc <svc@localhost> ${Math.floor(Date.now() / 1000)} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}\n`];
  for (const t of tasks) chunks.push(`M 100644 inline .sdd/${t.rel}\ndata ${Buffer.byteLength(t.body)}\n${t.body}\n`);
  child.stdin.end(chunks.join(''));
  await new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exit ${code}`)))));
  // Write back the seed's dirty pages now: otherwise the first fsyncs measured pay for 100k files.
  execFileSync('sync');
  return tasks.map((t) => t.rel.split('/').pop()!.slice(0, -5));
}

/** One run: a fresh committer, warm-ups, then ITERATIONS timed (update one task → flush). */
async function measure(root: string, layout: SddLayout, ids: string[]): Promise<{ total: number[]; flush: number[] }> {
  const log = silentLogger();
  const committer = createCommitter({ layout, git: createGit(root), log, clock: systemClock, intervalMs: 60_000, gcEveryCommits: 0 });
  const store = createRecordStore({ layout, committer, log });
  const total: number[] = [];
  const flush: number[] = [];
  for (let i = 0; i < WARMUPS + ITERATIONS; i++) {
    const id = ids[Math.floor(Math.random() * ids.length)]!;
    const t0 = performance.now();
    await store.update<Task>(layout.task(id), (t) => ({ ...t, counter: t.counter + 1 }), { note: `bump ${id}` });
    const t1 = performance.now();
    const r = await committer.flush();
    const t2 = performance.now();
    if (!r) throw new Error('flush made no commit');
    if (i >= WARMUPS) {
      total.push(t2 - t0);
      flush.push(t2 - t1);
    }
  }
  await committer.stop();
  await store.close();
  return { total, flush };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const median = (xs: number[]) => quantile(xs, 0.5);
const ms = (x: number) => x.toFixed(1);

async function main() {
  const rows: string[] = [];
  const medians = new Map<number, number>();
  let recoverLine = '';
  // Temp repos are deleted only at the end: on a disk mounted with online `discard` (as here),
  // deleting 100k files slows every fsync for a while and would pollute the next size's figures.
  const repos: TempRepo[] = [];
  try {
    for (const n of SIZES) {
      const repo = makeRepo('svc-bench-commit-');
      repos.push(repo);
      const layout = sddLayout(repo.dir);
      const s0 = performance.now();
      const ids = await seed(repo.dir, layout, n);
      const seedMs = performance.now() - s0;
      // The very first run of the process also warms the JIT and module caches: measured, then dropped.
      if (n === SIZES[0]) await measure(repo.dir, layout, ids);
      const runs = [];
      for (let r = 0; r < RUNS; r++) runs.push(await measure(repo.dir, layout, ids));
      const total = runs.flatMap((r) => r.total);
      const flush = runs.flatMap((r) => r.flush);
      medians.set(n, median(total));
      const perRun = runs.map((r) => ms(median(r.total))).join(' / ');
      rows.push(`| ${n.toLocaleString('en-US')} | ${ms(median(total))} | ${ms(quantile(total, 0.9))} | ${ms(median(flush))} | ${ms(quantile(flush, 0.9))} | ${perRun} | ${(seedMs / 1000).toFixed(1)} s |`);
      process.stderr.write(`N=${n} done\n`);
      if (n === SIZES.at(-1)) recoverLine = await timeRecover(repo.dir, layout, n);
    }
  } finally {
    for (const repo of repos) repo.cleanup();
  }
  const ratio = (medians.get(100_000) ?? NaN) / (medians.get(1_000) ?? NaN);
  console.log(`\ncommit latency, ms (${RUNS} runs × ${ITERATIONS} iterations after ${WARMUPS} warm-ups, fresh committer per run)\n`);
  console.log('| tasks | update+flush median | update+flush p90 | flush median | flush p90 | median per run | seed |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`\nratio median(100k) / median(1k) = ${ratio.toFixed(2)} (target ≤ 1.5)`);
  console.log(recoverLine);
}

/** recover() with a fresh committer on an unchanged tree of n tasks (twice: the first reads a cold cache). */
async function timeRecover(root: string, layout: SddLayout, n: number): Promise<string> {
  const times: string[] = [];
  for (let i = 0; i < 2; i++) {
    const committer = createCommitter({ layout, git: createGit(root), log: silentLogger(), clock: systemClock, intervalMs: 60_000, gcEveryCommits: 0 });
    const t0 = performance.now();
    const { commit } = await committer.recover();
    times.push(`${((performance.now() - t0) / 1000).toFixed(2)} s`);
    if (commit) throw new Error(`recover found changes in an unchanged tree: ${commit.message}`);
  }
  return `recover() on an unchanged ${n.toLocaleString('en-US')}-task tree: ${times.join(', then ')} (no commit)`;
}

await main();
