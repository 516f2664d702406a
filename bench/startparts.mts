// Scratch: time each start step over N task files written straight to disk.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { silentLogger } from '../src/lib/log.ts';
import { systemClock } from '../src/lib/clock.ts';
import { defaultConfig } from '../src/config/index.ts';
import { createTenantGate, ensureTenants } from '../src/auth/index.ts';
import { openAuditChain } from '../src/observe/index.ts';
import { createCommitter, createGit, createOwnedStore, sddLayout, ulidIds, replayJournal, stableStringify } from '../src/store/index.ts';
import { TaskService, newTask } from '../src/tasks/index.ts';
import { makeRepo } from '../test/helpers/repo.ts';
const N = Number(process.env.N ?? 100000);
const repo = makeRepo('svc-start-');
const layout = sddLayout(repo.dir);
const log = silentLogger();
const ids = ulidIds();
for (let i = 0; i < N; i++) {
  const t = newTask({ title: `t ${i}`, role: 'bench' } as never, { id: ids.next(), now: systemClock.iso(), tenant: 'default' });
  const f = layout.task(t.id);
  if (i % 50 === 0 || true) mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, stableStringify(t));
}
const committer = createCommitter({ layout, git: createGit(repo.dir), log, clock: systemClock, intervalMs: 250, gcEveryCommits: 0 });
await committer.recover(); // first commit of everything
for (let round = 0; round < 2; round++) {
  const c = createCommitter({ layout, git: createGit(repo.dir), log, clock: systemClock, intervalMs: 250, gcEveryCommits: 0 });
  let t = performance.now();
  const lap = (what: string) => { const n = performance.now(); console.log(`${what}: ${Math.round(n - t)} ms`); t = n; };
  await ensureTenants(layout); lap('tenants');
  await replayJournal(layout, log); lap('replay');
  const sealer = await openAuditChain({ layout, clock: systemClock, log }); lap('audit chain');
  const store = createOwnedStore({ layout, committer: c, log, sealer });
  const svc = new TaskService({ layout, store, clock: systemClock, ids, log, tenants: createTenantGate({ layout, log, defaultMax: 1e7 }), config: defaultConfig() });
  if (process.env.PAR) { await Promise.all([c.recover(), svc.load()]); lap('recover || load'); }
  else { await c.recover(); lap('recover'); await svc.load(); lap('load'); }
  await store.close(); await c.stop(); lap('close');
}
repo.cleanup();
