// Scratch (not committed): CPU per cycle of two builds on the same loop, interleaved; load-independent-ish.
import { readFileSync } from 'node:fs';
import { runLoop } from './lib/loop.ts';
import { seedTasks, startSvc, svcSteps, waitSettled } from './lib/svc-server.ts';

const builds = (process.env.BUILDS ?? '/tmp/base/dist/cli/main.js,/work/wt-12/dist/cli/main.js').split(',');
const N = Number(process.env.N ?? 5000);
const W = Number(process.env.W ?? 32);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const cpuMs = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
for (let r = 0; r < ROUNDS; r++) {
  for (const b of builds) {
    const server = await startSvc({ command: { mode: 'dist', argv: [b] } });
    try {
      await seedTasks(server, 2000, 'warmup', 1000, 'warmup');
      const w = svcSteps(server, 'warmup', 32); await runLoop(w.steps, 32); w.close();
      await seedTasks(server, N, 'bench');
      await waitSettled(server);
      const c0 = cpuMs(server.pid);
      const s = svcSteps(server, 'bench', W);
      const res = await runLoop(s.steps, W);
      s.close();
      const c1 = cpuMs(server.pid);
      const t0 = Date.now(); await waitSettled(server, { journal: false }); const settle = Date.now() - t0;
      const c2 = cpuMs(server.pid);
      console.log(`${b.includes('base') ? 'base' : 'new '} W=${W} ${Math.round(res.cycles / res.seconds)} cycles/s, loop cpu ${((c1 - c0) / res.cycles).toFixed(3)} ms/cycle, +settle cpu ${((c2 - c0) / res.cycles).toFixed(3)} ms/cycle, settle ${settle} ms`);
    } finally { await server.stop(); server.repo.cleanup(); }
  }
}
