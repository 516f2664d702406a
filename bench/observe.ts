// bench:observe — /events fan-out to 100 clients (change → client latency) and /status, /dashboard/data
// latency at 10k and 100k tasks, against a real `svc up`, with GET /health in the same run as the baseline.
// BENCH_SIZES=10000,100000 (default), BENCH_CLIENTS=100, BENCH_CHANGES=50.
import { spawn } from 'node:child_process';
import { request, Agent } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyTask } from '../src/compliance/index.ts';
import { shardedRel } from '../src/store/index.ts';
import { makeRepo } from '../test/helpers/repo.ts';
import { jsonClient, type JsonClient } from './lib/http.ts';
import { median, num, percentile, table } from './lib/stats.ts';
import { startSvc, type SvcServer } from './lib/svc-server.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 50);
const ROLES = ['backend', 'frontend', 'qa', 'security'];
const STATUS_MIX: [string, number][] = [['open', 0.6], ['in_progress', 0.05], ['closed', 0.3], ['failed', 0.05]];

// N whole task records (sharded like the store) and their EU AI Act records, written before the server starts
// and committed as the first state commit with one `git fast-import` (as bench/commit.ts does), so the
// server's start finds nothing to recover.
async function seedFiles(root: string, n: number): Promise<void> {
  const sdd = join(root, '.sdd');
  const files: [string, string][] = [];
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const id = `01jz${i.toString(36).padStart(22, '0')}`;
    const at = new Date(start + i * 1000).toISOString();
    let r = (i * 7919 % 1000) / 1000;
    const status = STATUS_MIX.find(([, share]) => (r -= share) < 0)?.[0] ?? 'open';
    const working = status === 'in_progress';
    const task = {
      id, title: `Bench task ${i}: refactor module ${i % 97}`, description: '', role: ROLES[i % 4]!, priority: i % 5, scope: 'medium', complexity: 'medium', status,
      assigned_agent: working ? `agent-${i % 7}` : null, claimed_by_session: working ? `backend-${(i % 4096).toString(16).padStart(8, '0')}` : null,
      parent_session_id: null, parent_task_id: null, depends_on: [], owned_files: [], cell_id: null, tenant: 'default', version: working ? 3 : 1,
      estimated_minutes: 30, model: null, result_summary: status === 'closed' ? 'done' : null, failure: status === 'failed' ? { type: 'failed', reason: 'bench' } : null,
      status_reason: null, branch: null, metadata: {}, chat_context: null, node_id: null, retry_count: 0, max_retries: 2, claim_count: working ? 1 : 0,
      created_at: at, updated_at: at, claimed_at: working ? at : null, completed_at: status === 'closed' || status === 'failed' ? at : null,
    };
    files.push([shardedRel('tasks', id, '.json'), `${JSON.stringify(task, null, 2)}\n`], [`eu_ai_act/${id}.json`, `${JSON.stringify(classifyTask(task), null, 2)}\n`]);
  }
  for (const [rel, body] of files) {
    mkdirSync(join(sdd, rel, '..'), { recursive: true });
    writeFileSync(join(sdd, rel), body);
  }
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: root, stdio: ['pipe', 'inherit', 'inherit'] });
  const msg = `seed ${n} tasks`;
  const chunks = [`commit refs/sdd/state\ncommitter svc <svc@localhost> ${Math.floor(Date.now() / 1000)} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}\n`];
  for (const [rel, body] of files) chunks.push(`M 100644 inline .sdd/${rel}\ndata ${Buffer.byteLength(body)}\n${body}\n`);
  child.stdin.end(chunks.join(''));
  await new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exit ${code}`)))));
}

// One GET read to its last byte (not parsed: the client's JSON.parse of megabytes is not the server's time).
function getRaw(s: SvcServer, agent: Agent, path: string): Promise<{ status: number; bytes: number }> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, agent, headers: { authorization: `Bearer ${s.token}` } }, (res) => {
      let bytes = 0;
      res.on('data', (b: Buffer) => { bytes += b.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// Latency (ms, to the last byte) of `n` GETs of `path`; `change` runs before each (untimed) when the cache must miss.
async function timeGets(s: SvcServer, agent: Agent, path: string, n: number, change?: () => Promise<unknown>): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    if (change) await change();
    const t0 = performance.now();
    const r = await getRaw(s, agent, path);
    ms.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
    bytes = r.bytes;
  }
  return { ms, bytes };
}

interface Listener { close(): void }

// One raw SSE client: calls `seen(marker)` when an event whose title carries "fanout-<k>" arrives.
function listen(s: SvcServer, agent: Agent, seen: (k: number) => void): Promise<Listener> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/events', agent, headers: { authorization: `Bearer ${s.token}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`/events answered ${res.statusCode}`)); return; }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { for (const m of chunk.matchAll(/"title":"fanout-(\d+)"/g)) seen(Number(m[1])); });
      resolve({ close: () => req.destroy() });
    });
    req.on('error', (err) => { if (!req.destroyed) reject(err); });
    req.end();
  });
}

// 100 clients on /events; CHANGES task creations one after another; latency from the POST's start to each client's receipt.
async function fanOut(s: SvcServer, c: JsonClient): Promise<{ lat: number[]; post: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS + 1 });
  const sent = new Map<number, number>();
  const lat: number[] = [];
  const pending = new Map<number, { left: number; done: () => void }>();
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => listen(s, agent, (k) => {
    lat.push(performance.now() - sent.get(k)!);
    const p = pending.get(k)!;
    if (--p.left === 0) p.done();
  })));
  const post: number[] = [];
  for (let k = 0; k < CHANGES; k++) {
    const all = new Promise<void>((done) => pending.set(k, { left: CLIENTS, done }));
    sent.set(k, performance.now());
    await c.call('POST', '/tasks', { title: `fanout-${k}` });
    post.push(performance.now() - sent.get(k)!);
    await all;
  }
  for (const cl of clients) cl.close();
  agent.destroy();
  return { lat, post };
}

const fmt = (xs: number[]) => [num(median(xs), 2), num(percentile(xs, 99), 2)];

async function main(): Promise<void> {
  const rows: string[][] = [];
  let fan: { lat: number[]; post: number[] } | undefined;
  let mode = '';
  for (const n of SIZES) {
    const repo = makeRepo('svc-bench-observe-');
    mkdirSync(join(repo.dir, '.sdd', 'eu_ai_act'), { recursive: true });
    const seedT0 = Date.now();
    await seedFiles(repo.dir, n);
    const seedS = (Date.now() - seedT0) / 1000;
    const startT0 = Date.now();
    const s = await startSvc({ repo, configYaml: 'observe:\n  events:\n    max_buffer_bytes: 67108864\n' });
    mode = s.mode;
    const startS = (Date.now() - startT0) / 1000;
    const c = jsonClient(s.url, s.token, 4);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const open = (await c.call('GET', '/tasks?status=open&limit=1')).body.tasks[0].id as string;
      let p = 0;
      const change = () => c.call('PATCH', `/tasks/${open}`, { priority: (p++ % 5) + 1 });
      await timeGets(s, agent, '/dashboard/data', 3);
      const health = (await timeGets(s, agent, '/health', 50)).ms;
      const statusMiss = (await timeGets(s, agent, '/status', 20, change)).ms;
      const statusHit = (await timeGets(s, agent, '/status', 20)).ms;
      const dashMiss = await timeGets(s, agent, '/dashboard/data', 10, change);
      const dashHit = (await timeGets(s, agent, '/dashboard/data', 10)).ms;
      rows.push([num(n), ...fmt(health), ...fmt(statusMiss), ...fmt(statusHit), ...fmt(dashMiss.ms), ...fmt(dashHit), `${num(dashMiss.bytes / 1e6, 1)} MB`, `${num(median(dashMiss.ms) / median(health), 0)}×`, `seed ${num(seedS, 1)} s, start ${num(startS, 1)} s`]);
      if (!fan) fan = await fanOut(s, c);
    } finally {
      c.close();
      agent.destroy();
      await s.stop();
      repo.cleanup();
    }
  }
  console.log(`bench:observe (${mode}; ${new Date().toISOString().slice(0, 10)}; Node ${process.version})\n`);
  console.log('GET latency, ms (median / p99); miss = a task changed just before (snapshot rebuilt), hit = board unchanged (cached body)\n');
  console.log(table(['tasks', '/health med', 'p99', '/status miss med', 'p99', '/status hit med', 'p99', '/dashboard/data miss med', 'p99', 'hit med', 'p99', 'body', 'dashboard miss / health', 'setup'], rows));
  if (fan) {
    console.log(`\n/events fan-out: ${CLIENTS} clients, ${CHANGES} task creations one after another (${num(fan.lat.length)} deliveries)\n`);
    console.log(table(['change → client median', 'p99', 'max', 'POST /tasks median (baseline)', 'p99'], [[num(median(fan.lat), 2), num(percentile(fan.lat, 99), 2), num(Math.max(...fan.lat), 2), ...fmt(fan.post)]]));
  }
}

await main();
