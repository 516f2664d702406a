// The floor under svc's task loop on this machine: the same client against a node:http server that does
// nothing but what a durable acknowledgement needs (one write and one datasync into a preallocated file per
// request), in its own process as svc is; with and without the datasync; and svc itself, runs interleaved.
//
// `npm run bench:floor`. BENCH_W (default 1), BENCH_N (cycles per run, default 3000), BENCH_RUNS (default 3).
// What it answers: how much of a W = 1 cycle is svc and how much is two processes, loopback HTTP and the disk.
import { spawn } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoop } from './lib/loop.ts';
import { median, num, percentile, table } from './lib/stats.ts';
import { seedTasks, startSvc, svcSteps, waitSettled, type SvcServer } from './lib/svc-server.ts';

const W = Number(process.env.BENCH_W ?? 1);
const N = Number(process.env.BENCH_N ?? 3000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP = 1000;

// The floor server (this file run with FLOOR_SERVE=1; it prints its port): GET /tasks/next/<role> hands out N ids per role
// then 404; POST /tasks/<id>/complete answers. Every 200 first writes a ~1 KB line and datasyncs (FLOOR_SYNC=1).
async function serveFloor(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-floor-'));
  const fd = openSync(join(dir, 'journal'), 'w+');
  writeSync(fd, Buffer.alloc(64 << 20)); // zeros written ahead, as svc's journal: a datasync changes no size
  fdatasyncSync(fd);
  let at = 0;
  const sync = process.env.FLOOR_SYNC === '1';
  const handed = new Map<string, number>();
  const record = (id: string) => JSON.stringify({ id, title: 'benchmark task', description: 'd'.repeat(600), role: 'bench', status: 'in_progress', version: 3 });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '';
      let id = url.split('/')[2] ?? 'x';
      if (url.startsWith('/tasks/next/')) {
        const n = handed.get(url) ?? 0;
        if (n >= N + WARMUP) { res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"no task"}'); return; }
        handed.set(url, n + 1);
        id = `t${n}`;
      }
      const body = record(id);
      const line = Buffer.from(JSON.stringify({ op: 'put', body }) + '\n');
      writeSync(fd, line, 0, line.length, at);
      at = (at + line.length) % (60 << 20);
      if (sync) fdatasyncSync(fd);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as { port: number }).port}\n`);
  });
  process.on('SIGTERM', () => { closeSync(fd); rmSync(dir, { recursive: true, force: true }); process.exit(0); });
}

interface Row { cps: number; p50: number; p99: number }

async function loop(server: Pick<SvcServer, 'url' | 'token'>, role: string, n: number): Promise<Row> {
  const { steps, close } = svcSteps(server as SvcServer, role, W);
  try {
    const r = await runLoop(steps, W, Infinity, n);
    return { cps: r.cycles / r.seconds, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99) };
  } finally { close(); }
}

async function floorRun(sync: boolean): Promise<Row> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], { env: { ...process.env, FLOOR_SERVE: '1', FLOOR_SYNC: sync ? '1' : '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      child.once('exit', (code) => reject(new Error(`the floor server exited (${code})`)));
    });
    const server = { url: `http://127.0.0.1:${port}`, token: 'floor' };
    await loop(server, 'warmup', WARMUP);
    return await loop(server, 'bench', N);
  } finally { child.kill('SIGTERM'); }
}

async function svcRun(): Promise<Row> {
  const server = await startSvc();
  try {
    await seedTasks(server, WARMUP, 'warmup', 1000, 'warmup');
    await loop(server, 'warmup', WARMUP);
    await seedTasks(server, N, 'bench');
    await waitSettled(server);
    return await loop(server, 'bench', N);
  } finally { await server.stop(); server.repo.cleanup(); }
}

if (process.env.FLOOR_SERVE) await serveFloor();
else {
  const rows: Record<string, Row[]> = { svc: [], 'floor, datasync per request': [], 'floor, no datasync': [] };
  for (let i = 0; i < RUNS; i++) {
    rows['floor, datasync per request']!.push(await floorRun(true));
    rows.svc!.push(await svcRun());
    rows['floor, no datasync']!.push(await floorRun(false));
    console.error(`[bench:floor] run ${i + 1}: ${Object.entries(rows).map(([k, v]) => `${k} ${num(v.at(-1)!.cps)}`).join(', ')} cycles/s`);
  }
  const floor = median(rows['floor, datasync per request']!.map((r) => r.cps));
  console.log(`\nW = ${W}, two requests per cycle (GET /tasks/next, POST complete), ${num(N)} cycles per run, medians of ${RUNS}\n`);
  console.log(table(['server', 'cycles/s', 'of the datasync floor', 'p50 ms', 'p99 ms'], Object.entries(rows).map(([k, v]) => {
    const cps = median(v.map((r) => r.cps));
    return [k, num(cps), `${num(cps / floor, 2)}×`, num(median(v.map((r) => r.p50)), 2), num(median(v.map((r) => r.p99)), 2)];
  })));
}
