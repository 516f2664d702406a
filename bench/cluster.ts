// Benchmark of the cluster: heartbeats per second and `next` claims per second with 100 registered nodes through a
// real `svc up`, against GET /alive (the HTTP floor) and admin-token claims measured in the same run; and the
// staleness sweep at 1,000 nodes in-process. Run: npm run bench:cluster. BENCH_HEARTBEATS (default 5000),
// BENCH_CLAIMS (2000), BENCH_WORKERS (32), BENCH_RUNS (3), BENCH_NODES (100), BENCH_SWEEP_NODES (1000) scale it.
import { writeFileSync, mkdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ClusterService, clusterFiles, clusterMetrics, createNodeTokens, registered, registryFile, staleIds } from '../src/cluster/index.ts';
import { manualClock } from '../src/lib/clock.ts';
import { silentLogger } from '../src/lib/log.ts';
import { createRecordStore, sddLayout } from '../src/store/index.ts';
import { makeTempDir } from '../test/helpers/repo.ts';
import { median, num, percentile, table } from './lib/stats.ts';
import { seedTasks, startSvc, waitSettled } from './lib/svc-server.ts';

const N_HB = Number(process.env.BENCH_HEARTBEATS ?? 5000);
const N_CLAIMS = Number(process.env.BENCH_CLAIMS ?? 2000);
const W = Number(process.env.BENCH_WORKERS ?? 32);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const NODES = Number(process.env.BENCH_NODES ?? 100);
const SWEEP_NODES = Number(process.env.BENCH_SWEEP_NODES ?? 1000);
const SECRET = 'bench-cluster-secret-0123456789abcdef-0123';

const server = await startSvc({ env: { SERVICE_CLUSTER_SECRET: SECRET } });
const url = new URL(server.url);
const agent = new Agent({ keepAlive: true, maxSockets: W, maxFreeSockets: W });
const send = (method: string, path: string, token: string | null, body?: unknown) => new Promise<{ status: number; body: any }>((resolve, reject) => {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string | number> = token ? { authorization: `Bearer ${token}` } : {};
  if (data) { headers['content-type'] = 'application/json'; headers['content-length'] = data.length; }
  const req = request({ host: url.hostname, port: url.port, method, path, agent, headers }, (res) => {
    let text = '';
    res.on('data', (c) => (text += c));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
  });
  req.on('error', reject);
  req.end(data);
});

/** `n` requests from W concurrent clients (or until `done` says the queue is empty); each answer checked. */
async function load(n: number, make: (i: number) => [string, string, string | null, unknown?], ok: (status: number) => boolean | 'stop') {
  const latencies: number[] = [];
  let next = 0, answered = 0, stopped = false;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: W }, async () => {
    while (next < n && !stopped) {
      const [method, path, token, body] = make(next++);
      const t = performance.now();
      const res = await send(method, path, token, body);
      const verdict = ok(res.status);
      if (verdict === 'stop') { stopped = true; break; }
      if (!verdict) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
      latencies.push(performance.now() - t);
      answered++;
    }
  }));
  return { perS: answered / ((performance.now() - t0) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), answered };
}

const nodes: { id: string; token: string }[] = [];
for (let i = 0; i < NODES; i++) {
  const r = await send('POST', '/cluster/nodes', SECRET, { name: `bench-${i}`, url: `http://bench-${i}:9000`, capacity: { max_agents: 6 } });
  if (r.status !== 201) throw new Error(`register answered ${r.status}`);
  nodes.push({ id: r.body.id, token: r.body.auth_token });
}
const beat = (i: number): [string, string, string | null, unknown] => {
  const n = nodes[i % nodes.length]!;
  return ['POST', `/cluster/nodes/${n.id}/heartbeat`, n.token, { available_slots: i % 7, active_agents: 6 - (i % 7) }];
};
await load(300, beat, (s) => s === 200);
await load(300, () => ['GET', '/alive', null], (s) => s === 200);

type Cell = { perS: number; p50: number; p99: number };
const cells: Record<string, Cell[]> = { alive: [], heartbeat: [], claimAdmin: [], claimNode: [] };
for (let run = 0; run < RUNS; run++) {
  cells.alive!.push(await load(N_HB, () => ['GET', '/alive', null], (s) => s === 200));
  cells.heartbeat!.push(await load(N_HB, beat, (s) => s === 200));
  await seedTasks(server, N_CLAIMS, `admin${run}`, 1000, `admin ${run}`);
  await seedTasks(server, N_CLAIMS, `node${run}`, 1000, `node ${run}`);
  await waitSettled(server, { journal: false });
  const untilEmpty = (s: number) => (s === 404 ? 'stop' as const : s === 200);
  cells.claimAdmin!.push(await load(N_CLAIMS + W, () => ['GET', `/tasks/next/admin${run}`, server.token], untilEmpty));
  cells.claimNode!.push(await load(N_CLAIMS + W, (i) => ['GET', `/tasks/next/node${run}`, nodes[i % nodes.length]!.token], untilEmpty));
  await waitSettled(server, { journal: false });
}
const status = await send('GET', '/cluster/status', server.token);
const claimedByNodes = Object.values(status.body.claimed as Record<string, string[]>).reduce((s, ids) => s + ids.length, 0);
agent.destroy();
await server.stop();

// The staleness sweep in-process: 1,000 nodes heartbeating, nothing stale (every 15 s) and all stale (once).
const tmp = makeTempDir('svc-bench-sweep-');
const sweepRows: string[][] = [];
try {
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.clusterDir, { recursive: true });
  const t0 = Date.parse('2026-03-01T00:00:00.000Z');
  const entries = Array.from({ length: SWEEP_NODES }, (_, i) => registered(undefined, { name: `n${i}`, url: `http://n${i}` }, t0, i.toString(16).padStart(12, '0')));
  writeFileSync(clusterFiles(layout).nodes, JSON.stringify(registryFile(entries, 1)));
  const fresh = async () => {
    const clock = manualClock(t0);
    const svc = new ClusterService({
      store: createRecordStore({ layout, log: silentLogger(), committer: { touch() {} } }), file: clusterFiles(layout).nodes, clock, log: silentLogger(),
      audit: { append: async () => undefined }, metrics: clusterMetrics(() => ({})), tokens: createNodeTokens({ secret: SECRET, clock, newJti: () => 'j', expiryHours: 1 }),
      tasks: { heldByNode: () => new Map(), returnToOpen: async () => false, install() {} }, newId: () => 'ffffffffffff', nodeTimeoutS: 60,
    });
    await svc.load();
    for (const e of entries) await svc.heartbeat(e.id, { available_slots: 3, active_agents: 3 }, { kind: 'env', role: 'admin', tenant: null, actor: 'bench' });
    return { svc, clock };
  };
  const perCall = async (n: number, fn: () => unknown) => { const t = performance.now(); for (let i = 0; i < n; i++) await fn(); return ((performance.now() - t) / n) * 1000; };
  const { svc, clock } = await fresh();
  clock.advance(30_000);
  const live = svc.entries();
  const floor: number[] = [], pure: number[] = [], quiet: number[] = [], all: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    floor.push(await perCall(2000, () => { let n = 0; for (const e of live) if (e.alive) n++; return n; }));
    pure.push(await perCall(2000, () => staleIds(live, clock.now(), 60_000)));
    quiet.push(await perCall(500, () => svc.sweep()));
    const f = await fresh();
    f.clock.advance(60_000);
    all.push(await perCall(1, () => f.svc.sweep()));
  }
  const f = median(floor);
  sweepRows.push(['a loop counting the live nodes (baseline)', num(f, 1), '1'], ['staleIds, nothing stale (pure)', num(median(pure), 1), num(median(pure) / f, 2)],
    ['ClusterService.sweep, nothing stale', num(median(quiet), 1), num(median(quiet) / f, 2)], ['ClusterService.sweep, all stale (once: 1,000 flips, audit no-op)', num(median(all), 1), num(median(all) / f, 2)]);
} finally {
  tmp.cleanup();
}

const m = (k: string) => ({ perS: median(cells[k]!.map((c) => c.perS)), p50: median(cells[k]!.map((c) => c.p50)), p99: median(cells[k]!.map((c) => c.p99)) });
const alive = m('alive'), admin = m('claimAdmin');
const row = (name: string, c: Cell, base: Cell) => [name, num(c.perS), num(c.p50, 2), num(c.p99, 2), num(c.perS / base.perS, 3)];
console.log(`${NODES} registered nodes, ${W} concurrent clients, ${RUNS} runs (medians); ${N_HB} heartbeats and ${N_CLAIMS} claims per run; server from ${server.mode}; ${cpus().length} CPUs\n`);
console.log(table(['measure', 'per second', 'p50 ms', 'p99 ms', 'ratio to baseline'], [
  row('GET /alive, no credential (HTTP floor, baseline of heartbeats)', alive, alive),
  row('heartbeat with the node\'s own token', m('heartbeat'), alive),
  row('next with the admin token (baseline of node claims)', admin, admin),
  row('next with a node token (records node_id, claim gate)', m('claimNode'), admin),
]));
console.log(`\nclaimed tasks the registry lists per node after the runs: ${claimedByNodes} (expected ${RUNS * N_CLAIMS})\n`);
console.log(`staleness sweep over ${SWEEP_NODES} nodes (in-process, µs per sweep; it runs every 15 s)\n`);
console.log(table(['measure', 'µs per sweep', 'ratio to baseline'], sweepRows));
