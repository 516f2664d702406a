// Scratch (not committed): one profiled server under the W loop; prints the top self-time functions.
import { readdirSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runLoop } from './lib/loop.ts';
import { seedTasks, startSvc, svcSteps, waitSettled } from './lib/svc-server.ts';
const dir = '/tmp/prof-' + Date.now();
mkdirSync(dir);
const N = Number(process.env.N ?? 5000), W = Number(process.env.W ?? 32);
const server = await startSvc({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], command: { mode: 'dist', argv: [process.env.BUILD ?? '/work/wt-12/dist/cli/main.js'] } });
await seedTasks(server, 2000, 'warmup', 1000, 'warmup');
let w = svcSteps(server, 'warmup', 32); await runLoop(w.steps, 32); w.close();
await seedTasks(server, N, 'bench'); await waitSettled(server);
const s = svcSteps(server, 'bench', W); const res = await runLoop(s.steps, W); s.close();
console.log(`${Math.round(res.cycles / res.seconds)} cycles/s`);
await server.stop(); server.repo.cleanup();
for (const f of readdirSync(dir)) {
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const self = new Map<string, number>();
  const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
  const dt = p.timeDeltas as number[]; const samples = p.samples as number[];
  let total = 0;
  samples.forEach((id, i) => { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; });
  console.log(f, 'total ms', Math.round(total / 1000));
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 35))) console.log((v / total * 100).toFixed(1).padStart(5), k);
}
