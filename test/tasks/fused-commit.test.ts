// The fused cycle (complete?next=<role>) over the server's own store: the finish and the next claim share
// one group commit of the journal (one write + datasync per cycle), and a finish the disk refuses claims nothing.
import { mkdirSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTenantGate } from '../../src/auth/index.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import type { Route } from '../../src/lib/route.ts';
import { openAuditChain } from '../../src/observe/index.ts';
import { errnoError } from '../../src/store/disk.ts';
import { journalPaths } from '../../src/store/journal.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createOwnedStore } from '../../src/store/records/owned.ts';
import type { ClosableRecordStore } from '../../src/store/types.ts';
import { openTasks, type Task, type Tasks } from '../../src/tasks/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('fused cycle: one group commit per cycle');
let tmp: ReturnType<typeof makeTempDir>;
let store: ClosableRecordStore;
let tasks: Tasks;
let complete: Route;
// Group commits of the journal (one write + datasync each), and whether the next one is refused.
let batches = 0;
let refuseNext = false;
const admin = { actor: 'admin', tenant: 'default' };

T.before.each(async () => {
  tmp = makeTempDir('svc-fused-');
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.sdd, { recursive: true });
  const log = silentLogger();
  const clock = manualClock();
  const journal = journalPaths(layout).current;
  batches = 0;
  refuseNext = false;
  const faults = {
    beforeWrite(path: string) {
      if (path !== journal) return;
      batches++;
      if (refuseNext) { refuseNext = false; throw errnoError('ENOSPC', path); }
    },
  };
  const sealer = await openAuditChain({ layout, clock, log });
  store = createOwnedStore({ layout, log, faults, sealer, committer: { touch() {} }, journal: { syncFs: async () => undefined } });
  let n = 0;
  const domain = await openTasks({ layout, store, clock, ids: { next: () => `t${String(++n).padStart(25, '0')}` }, log, tenants: createTenantGate({ layout, log, defaultMax: 100 }), config: defaultConfig() });
  tasks = domain.tasks;
  complete = domain.routes.write.find((r) => r.method === 'POST' && r.path === '/tasks/:task_id/complete')!;
});
T.after.each(async () => {
  await store.close();
  tmp.cleanup();
});

// The route's handler as the pipeline calls it, with ?next=<role>.
const completeNext = (id: string, role: string) => complete.handler({
  params: { task_id: id }, query: { next: role }, body: { result_summary: 'done it' }, who: admin,
  principal: { kind: 'env', role: 'admin', tenant: null, actor: 'admin' },
} as never) as Promise<{ completed: Task; next: Task | null }>;

T('complete?next= finishes one task and claims the next in one journal write and datasync', async () => {
  const first = await tasks.create({ title: 'one', role: 'qa' } as never, admin);
  const second = await tasks.create({ title: 'two', role: 'qa' } as never, admin);
  await tasks.claim(first.id, { claimed_by_session: 's1' }, admin);
  const before = batches;
  const r = await completeNext(first.id, 'qa');
  assert.is(r.completed.status, 'done');
  assert.is(r.next?.id, second.id);
  assert.is(r.next?.claimed_by_session, 's1');
  assert.is(batches - before, 1, 'the finish and the claim went out in one group commit');
});

T('a finish the disk refuses answers its error and leaves the next task open, unclaimed', async () => {
  const first = await tasks.create({ title: 'one', role: 'qa' } as never, admin);
  const second = await tasks.create({ title: 'two', role: 'qa' } as never, admin);
  await tasks.claim(first.id, { claimed_by_session: 's1' }, admin);
  refuseNext = true;
  const err = await completeNext(first.id, 'qa').then(() => null, (e: unknown) => e as Error & { status?: number });
  assert.ok(err, 'the request fails');
  assert.is(tasks.get(first.id)?.status, 'claimed', 'the finish was not applied');
  assert.is(tasks.get(second.id)?.status, 'open', 'and nothing was claimed for the session');
  // The disk is back: the same cycle goes through.
  const r = await completeNext(first.id, 'qa');
  assert.equal([r.completed.status, r.next?.id], ['done', second.id]);
});

T('a finish the machine refuses (the task is done already) claims nothing: no write at all', async () => {
  const first = await tasks.create({ title: 'one', role: 'qa' } as never, admin);
  const second = await tasks.create({ title: 'two', role: 'qa' } as never, admin);
  await tasks.claim(first.id, { claimed_by_session: 's1' }, admin);
  await tasks.complete(first.id, { result_summary: 'done' }, admin);
  const before = batches;
  const err = await completeNext(first.id, 'qa').then(() => null, (e: unknown) => e as Error);
  assert.ok(err, 'the second completion is refused');
  assert.is(tasks.get(second.id)?.status, 'open');
  assert.is(tasks.get(second.id)?.version, second.version, 'never claimed and released again');
  assert.is(batches, before, 'nothing journaled');
});

T.run();
