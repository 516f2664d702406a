// Scratch: heap vs RSS after seeding N.
import { readFileSync } from 'node:fs';
import { seedTasks, startSvc, waitSettled } from './lib/svc-server.ts';
const N = Number(process.env.N ?? 100000);
const cmd = { mode: 'dist' as const, argv: [process.env.BUILD ?? '/work/wt-12/dist/cli/main.js'] };
const server = await startSvc({ command: cmd });
const show = async (what: string) => {
  const m = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } })).text();
  const g = (k: string) => Math.round(Number(new RegExp(`^${k}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(m)?.[1] ?? NaN) / 1048576);
  const st = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  console.log(what, 'rss', Math.round(Number(/VmRSS:\s+(\d+)/.exec(st)![1]) / 1024), 'hwm', Math.round(Number(/VmHWM:\s+(\d+)/.exec(st)![1]) / 1024), 'heapUsed', g('nodejs_heap_size_used_bytes'), 'heapTotal', g('nodejs_heap_size_total_bytes'), 'external', g('nodejs_external_memory_bytes'));
};
await show('start');
for (let i = 0; i < N; i += 20000) { await seedTasks(server, Math.min(20000, N - i), 'bench', 1000, `b${i}`); await show(`seeded ${i + 20000}`); }
await waitSettled(server); await show('settled');
await new Promise((r) => setTimeout(r, 3000)); await show('idle 3s');
await server.stop(); server.repo.cleanup();
