// Scratch (not committed): store + task service in-process (no HTTP), W concurrent next → complete loops.
import { silentLogger } from '../src/lib/log.ts';
import { systemClock } from '../src/lib/clock.ts';
import { defaultConfig } from '../src/config/index.ts';
import { createTenantGate, ensureTenants } from '../src/auth/index.ts';
import { openAuditChain } from '../src/observe/index.ts';
import { createCommitter, createGit, createOwnedStore, sddLayout, ulidIds, replayJournal } from '../src/store/index.ts';
import { TaskService, createBatch, claimNext, completeTask } from '../src/tasks/index.ts';
import { makeRepo } from '../test/helpers/repo.ts';

const N = Number(process.env.N ?? 10000), W = Number(process.env.W ?? 32);
const repo = makeRepo('svc-inproc-');
const layout = sddLayout(repo.dir);
const log = silentLogger();
const clock = systemClock;
const config = defaultConfig();
await ensureTenants(layout);
await replayJournal(layout, log);
const committer = createCommitter({ layout, git: createGit(repo.dir), log, clock, intervalMs: 250, gcEveryCommits: 0 });
await committer.recover();
const sealer = await openAuditChain({ layout, clock, log });
let jw = 0;
const store = createOwnedStore({ layout, committer, log, sealer, faults: { beforeWrite: (p) => { if (p.endsWith('journal.jsonl')) jw++; } } });
const svc = new TaskService({ layout, store, clock, ids: ulidIds(), log, tenants: createTenantGate({ layout, log, defaultMax: 10_000_000 }), config });
committer.start();
const who = { actor: 'bench', tenant: 'default' };
for (let i = 0; i < N; i += 1000) await createBatch(svc, Array.from({ length: Math.min(1000, N - i) }, (_, k) => ({ title: `t ${i + k}`, role: 'bench' })) as never, who);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const c0 = cpu(); const t0 = performance.now(); jw = 0;
let cycles = 0;
await Promise.all(Array.from({ length: W }, async () => {
  for (;;) {
    let t;
    try { t = await claimNext(svc, 'bench', {}, who); } catch { return; }
    await completeTask(svc, t.id, { result_summary: 'done' }, who);
    cycles++;
  }
}));
const secs = (performance.now() - t0) / 1000;
console.log(`${jw} journal writes (${(2 * cycles / jw).toFixed(1)} ops each), ${cycles} cycles, ${Math.round(cycles / secs)} cycles/s, ${((cpu() - c0) / cycles).toFixed(3)} ms cpu/cycle (process, all threads)`);
await store.close(); await committer.stop(); repo.cleanup();
