// Benchmark of `/state.git`: fetching refs/sdd/state of a 100k-task board over git's smart HTTP from a
// real `svc up`, next to `git fetch` of the same ref over the local file path (upload-pack through a
// pipe: the floor for the same packs). Run: npm run bench:state-fetch
// - cold: an empty bare repository fetches refs/sdd/state (what `git clone --mirror` does for this ref);
// - incremental: after 100 task changes (PATCH over the API, committed by the server), a client that
//   has the previous tip fetches again.
// BENCH_TASKS (default 100000) and BENCH_RUNS (default 5) change the size and the number of runs.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { median, num, peakRssMiB, table } from './lib/stats.ts';
import { seedTasks, startSvc, waitSettled, type SvcServer } from './lib/svc-server.ts';

const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHANGES = 100;
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-fetch-'));

// One git command in `cwd`, timed (ms); the token goes in a header as a teammate would send it.
async function git(cwd: string, args: string[], token?: string): Promise<number> {
  const auth = token ? ['-c', `http.extraHeader=Authorization: Bearer ${token}`] : [];
  const t0 = performance.now();
  await run('git', [...auth, ...args], { cwd, maxBuffer: 64 << 20, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  return performance.now() - t0;
}

async function bare(name: string): Promise<string> {
  const dir = join(scratch, name);
  await run('git', ['init', '-q', '--bare', dir]);
  return dir;
}

const FETCH = ['fetch', '-q', '--no-write-fetch-head'];
const REFSPEC = 'refs/sdd/state:refs/sdd/state';

// Cold: a fresh empty repository per run and per transport, HTTP and file path alternating first.
async function cold(s: SvcServer): Promise<{ http: number[]; file: number[] }> {
  const out = { http: [] as number[], file: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 ? (['file', 'http'] as const) : (['http', 'file'] as const);
    for (const how of order) {
      const dir = await bare(`cold-${how}-${i}`);
      const ms = how === 'http' ? await git(dir, [...FETCH, `${s.url}/state.git`, REFSPEC], s.token) : await git(dir, [...FETCH, s.repo.dir, REFSPEC]);
      out[how].push(ms);
      if (i < RUNS - 1) rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

// Incremental: two clients at the same tip; each run makes 100 changes, waits for their commit, fetches with both.
async function incremental(s: SvcServer): Promise<{ http: number[]; file: number[]; catchUp: number[] }> {
  const clients = { http: join(scratch, `cold-http-${RUNS - 1}`), file: join(scratch, `cold-file-${RUNS - 1}`) };
  const ids = (await (await fetch(`${s.url}/tasks?limit=500`, { headers: { authorization: `Bearer ${s.token}` } })).json() as { tasks: { id: string }[] }).tasks.map((t) => t.id);
  const out = { http: [] as number[], file: [] as number[], catchUp: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < CHANGES; k++) {
      const id = ids[(i * CHANGES + k) % ids.length]!;
      const res = await fetch(`${s.url}/tasks/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ priority: (i + k) % 10 }) });
      if (res.status !== 200) throw new Error(`PATCH answered ${res.status}: ${await res.text()}`);
    }
    await waitSettled(s, { journal: false });
    // The mirror catches up with the new commits (in the background while fetches come, else now):
    // timed apart, so the fetch rows compare the same transfer.
    out.catchUp.push(await git(scratch, ['ls-remote', `${s.url}/state.git`], s.token));
    const order = i % 2 ? (['file', 'http'] as const) : (['http', 'file'] as const);
    for (const how of order) {
      out[how].push(how === 'http' ? await git(clients.http, [...FETCH, `${s.url}/state.git`, REFSPEC], s.token) : await git(clients.file, [...FETCH, s.repo.dir, REFSPEC]));
    }
  }
  return out;
}

async function main(): Promise<void> {
  const s = await startSvc();
  try {
    console.log(`seeding ${num(TASKS)} tasks over POST /tasks/batch (${s.mode}) …`);
    const seeded = await seedTasks(s, TASKS, 'bench');
    await waitSettled(s, { journal: false });
    const commits = (await run('git', ['rev-list', '--count', 'refs/sdd/state'], { cwd: s.repo.dir })).stdout.trim();
    const first = await git(scratch, ['ls-remote', `${s.url}/state.git`], s.token);
    const rssBefore = await peakRssMiB(s.pid);
    const c = await cold(s);
    const rssAfter = await peakRssMiB(s.pid);
    const inc = await incremental(s);
    const pack = (await run('du', ['-sk', join(scratch, `cold-http-${RUNS - 1}`, 'objects')])).stdout.split('\t')[0];
    const row = (name: string, r: { http: number[]; file: number[] }) => {
      const h = median(r.http), f = median(r.file);
      return [name, num(h), num(f), num(h / f, 2), r.http.map((x) => num(x)).join(' / '), r.file.map((x) => num(x)).join(' / ')];
    };
    console.log(`\n${num(TASKS)} tasks (seeded in ${num(seeded, 1)} s, ${commits} commits in refs/sdd/state, fetched objects ${num(Number(pack) / 1024, 1)} MiB on disk)`);
    console.log(`first git ls-remote of /state.git (the mirror gets the whole history): ${num(first)} ms`);
    console.log(`median of ${RUNS} runs, ms; ratio = HTTP / file path\n`);
    console.log(table(['fetch of refs/sdd/state', 'HTTP /state.git', 'file path', 'ratio', 'HTTP runs', 'file runs'], [row('cold (empty repository)', c), row(`incremental (after ${CHANGES} changes)`, inc)]));
    console.log(`\ngit ls-remote right after each ${CHANGES} changes (the mirror catching up, if it has not yet): median ${num(median(inc.catchUp))} ms (${inc.catchUp.map((x) => num(x)).join(' / ')})`);
    console.log(`server peak RSS (VmHWM): ${num(rssBefore)} MiB before the cold fetches, ${num(rssAfter)} MiB after`);
  } finally {
    await s.stop();
    s.repo.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
