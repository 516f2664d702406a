// Scratch: where a start with N tasks spends its time (log lines with timestamps).
import { seedTasks, startSvc, waitSettled } from './lib/svc-server.ts';
const N = Number(process.env.N ?? 100000);
const cmd = { mode: 'dist' as const, argv: [process.env.BUILD ?? '/work/wt-12/dist/cli/main.js'] };
const server = await startSvc({ command: cmd });
await seedTasks(server, N, 'bench');
await waitSettled(server);
await server.stop();
for (let i = 0; i < 2; i++) {
  const t0 = Date.now();
  const again = await startSvc({ repo: server.repo, command: cmd });
  const ms = Date.now() - t0;
  console.log(`start ${i + 1}: ${ms} ms`);
  for (const line of again.output().split('\n').filter(Boolean)) { try { const j = JSON.parse(line); console.log(`  +${Date.parse(j.ts) - t0} ms ${j.msg}`); } catch { console.log('  ' + line.slice(0, 120)); } }
  await again.stop();
}
server.repo.cleanup();
