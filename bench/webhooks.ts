// Benchmark of the tracker webhook receiver: accepted deliveries per second with signature verification, through a
// real `svc up`, against a bare HMAC-SHA256 loop over the same body measured in the same run (the floor any
// verifying receiver pays). Run: npm run bench:webhooks. BENCH_DELIVERIES (default 3000), BENCH_WORKERS (32),
// BENCH_RUNS (3) scale it.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { trackerRegistry } from '../src/webhooks/index.ts';
import { verifyDelivery } from '../src/webhooks/trackers/registry.ts';
import { median, num, percentile, table } from './lib/stats.ts';
import { PROJECT, startSvc, waitSettled } from './lib/svc-server.ts';

const N = Number(process.env.BENCH_DELIVERIES ?? 3000);
const W = Number(process.env.BENCH_WORKERS ?? 32);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECRET = 'bench-webhook-secret';
const fixture = JSON.parse(readFileSync(join(PROJECT, 'fixtures', 'webhooks', 'tracker_b', 'issues-opened.json'), 'utf8'));
const sign = (raw: Buffer) => `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;

// The same bytes a tracker sends for ticket `i` (a new issue each), and a ping that makes no ticket.
const issueBody = (i: number) => Buffer.from(JSON.stringify({ ...fixture, issue: { ...fixture.issue, id: 900_000 + i, number: i, title: `Bench ticket ${i}` } }));
const pingBody = Buffer.from(JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, hook: { type: 'Repository', events: ['issues'] } }));

/** Ops per second of `fn` over `n` calls. */
function rate(n: number, fn: (i: number) => unknown): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return n / ((performance.now() - t0) / 1000);
}

// The floor: HMAC-SHA256 of the issue body, and the receiver's own verification (@octokit/webhooks-methods), in-process.
const raw = issueBody(1);
rate(20_000, () => createHmac('sha256', SECRET).update(raw).digest('hex'));
const hmacRates = Array.from({ length: RUNS }, () => rate(50_000, () => createHmac('sha256', SECRET).update(raw).digest('hex')));
const b = trackerRegistry().find('github')!;
const header = { 'x-hub-signature-256': sign(raw) } as Record<string, string>;
const verifyRates: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  for (let i = 0; i < 50_000; i++) await verifyDelivery(b, SECRET, raw, (n) => header[n]);
  verifyRates.push(50_000 / ((performance.now() - t0) / 1000));
}

const server = await startSvc({
  env: { BENCH_GH_SECRET: SECRET },
  configYaml: 'orchestrator:\n  enabled: false\ntrackers:\n  github:\n    webhook: { enabled: true, secret_env: BENCH_GH_SECRET }\n',
});
const url = new URL(server.url);
const agent = new Agent({ keepAlive: true, maxSockets: W, maxFreeSockets: W });
const post = (body: Buffer, headers: Record<string, string>) => new Promise<{ status: number; text: string }>((resolve, reject) => {
  const req = request({ host: url.hostname, port: url.port, method: 'POST', path: '/webhooks/trackers/github', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) } }, (res) => {
    let text = '';
    res.on('data', (c) => (text += c));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
  });
  req.on('error', reject);
  req.end(body);
});

/** Send `n` deliveries from `W` concurrent clients; every answer must have body status `want`. */
async function load(n: number, make: (i: number) => { body: Buffer; headers: Record<string, string> }, want: string) {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: W }, async () => {
    while (next < n) {
      const d = make(next++);
      const t = performance.now();
      const res = await post(d.body, d.headers);
      latencies.push(performance.now() - t);
      if (res.status !== 200 || JSON.parse(res.text).status !== want) throw new Error(`expected ${want}, got ${res.status} ${res.text.slice(0, 200)}`);
    }
  }));
  return { perS: n / ((performance.now() - t0) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

type Cell = { perS: number; p50: number; p99: number };
const cells: Record<string, Cell[]> = { tickets: [], pings: [], replays: [] };
let seq = 0;
const ids = new Set<number>();
try {
  await load(300, (i) => { const body = issueBody(-1 - i); return { body, headers: { 'x-github-event': 'issues', 'x-github-delivery': `warm-${i}`, 'x-hub-signature-256': sign(body) } }; }, 'accepted');
  for (let r = 0; r < RUNS; r++) {
    await waitSettled(server, { journal: false });
    cells.tickets!.push(await load(N, () => { const i = ++seq; ids.add(i); const body = issueBody(i); return { body, headers: { 'x-github-event': 'issues', 'x-github-delivery': `t-${i}`, 'x-hub-signature-256': sign(body) } }; }, 'accepted'));
    // The newest ticket delivery, still among the last 4096 ids after the pings.
    const last = seq;
    const seen = issueBody(last);
    cells.pings!.push(await load(Math.min(N, 3000), () => ({ body: pingBody, headers: { 'x-github-event': 'ping', 'x-github-delivery': `p-${++seq}`, 'x-hub-signature-256': sign(pingBody) } }), 'accepted'));
    cells.replays!.push(await load(N, () => ({ body: seen, headers: { 'x-github-event': 'issues', 'x-github-delivery': `t-${last}`, 'x-hub-signature-256': sign(seen) } }), 'replay'));
  }
  const tasks = await (await fetch(`${server.url}/tasks/counts`, { headers: { authorization: `Bearer ${server.token}` } })).json() as Record<string, number>;
  const hmac = median(hmacRates);
  const row = (name: string, c: Cell[]) => [name, num(median(c.map((x) => x.perS))), num(median(c.map((x) => x.p50)), 2), num(median(c.map((x) => x.p99)), 2), num(median(c.map((x) => x.perS)) / hmac, 4)];
  console.log(`\n${N} deliveries per run, ${W} concurrent clients, ${RUNS} runs (medians); body ${raw.length} bytes; server from ${server.mode}\n`);
  console.log(table(['measure', 'per second', 'p50 ms', 'p99 ms', 'ratio to bare HMAC'], [
    ['bare HMAC-SHA256 of the body, in-process (baseline)', num(hmac), '–', '–', '1'],
    ['verifyDelivery (sha256= via @octokit/webhooks-methods), in-process', num(median(verifyRates)), '–', '–', num(median(verifyRates) / hmac, 4)],
    row('accepted, a new ticket each (verify, ledger, task created)', cells.tickets!),
    row('accepted, ping (verify, parse, ledger line; no task)', cells.pings!),
    row('replay of a delivery seen before (verify, ledger lookup)', cells.replays!),
  ]));
  console.log(`\nopen tasks after the run: ${tasks.open ?? '?'} (expected ${ids.size + 300}); machine: ${cpus().length} vCPU ${cpus()[0]?.model ?? ''}, Node ${process.version}`);
} finally {
  agent.destroy();
  await server.stop();
  server.repo.cleanup();
}
