// The `Tasks` interface other domains hold, over a real store in a temp tree, with manual time: a long
// poll ends when a task appears or when the timers pass its wait, refusals carry codes, reservations.
import { mkdirSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTenantGate } from '../../src/auth/index.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { hasCode } from '../../src/lib/domain-error.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { createRecordStore, sddLayout } from '../../src/store/index.ts';
import { openTasks, type Tasks } from '../../src/tasks/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('Tasks: the narrow interface');
let tmp: ReturnType<typeof makeTempDir>;
let tasks: Tasks;
let timers: ReturnType<typeof manualTimers>;
const alice = { actor: 'alice', tenant: 'default' };

T.before.each(async () => {
  tmp = makeTempDir('svc-tasks-api-');
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.sdd, { recursive: true });
  const log = silentLogger();
  timers = manualTimers();
  const store = createRecordStore({ layout, committer: { touch() {} }, log, audit: { append: async () => undefined } });
  let n = 0;
  const ids = { next: () => `t${String(++n).padStart(25, '0')}` };
  ({ tasks } = await openTasks({ layout, store, clock: manualClock(), ids, log, tenants: createTenantGate({ layout, log, defaultMax: 100 }), config: defaultConfig(), timers }));
});
T.after.each(() => tmp.cleanup());

T('next with wait_s ends when a task of the role appears, and with NoOpenTask once the timers pass the wait', async () => {
  let got: unknown;
  const waiting = tasks.next('qa', { wait_s: 30, claimed_by_session: 's1' }, alice).then((t) => { got = t; });
  await timers.advance(10_000);
  assert.is(got, undefined, 'still waiting after 10 s');
  const created = await tasks.create({ title: 'check it', role: 'qa' } as never, alice);
  await waiting;
  assert.equal([(got as { id: string }).id, (got as { status: string }).status, (got as { claimed_by_session: string }).claimed_by_session], [created.id, 'claimed', 's1']);
  const empty = tasks.next('qa', { wait_s: 5 }, alice).then(() => 'claimed', (e: unknown) => e);
  await timers.advance(5_000);
  const err = await empty;
  assert.ok(hasCode(err, 'no_open_task'), String(err));
  assert.is(timers.pending, 0, 'no timer left behind');
});

T('refusals are codes; a reservation is claimed or released back to its queue; list and counts narrow by tenant and status', async () => {
  const a = await tasks.create({ title: 'a', role: 'be' } as never, alice);
  const b = await tasks.create({ title: 'b', role: 'be', depends_on: [a.id] } as never, alice);
  assert.ok(hasCode(await tasks.claim(b.id, {}, alice).catch((e: unknown) => e), 'claim_blocked'));
  assert.ok(hasCode(await tasks.apply(a.id, 'close', {}, alice).catch((e: unknown) => e), 'transition_refused'));
  assert.ok(hasCode(await tasks.claim(a.id, { expectedVersion: 7 }, alice).catch((e: unknown) => e), 'version_conflict'));
  assert.ok(hasCode((() => { try { return tasks.visible(a.id, 'other'); } catch (e) { return e; } })(), 'task_not_found'));
  const r = tasks.reserveNext('be', 'default');
  assert.is(r?.task.id, a.id, 'b waits for a');
  assert.is(tasks.reserveNext('be', 'default'), undefined, 'taken off the queue while reserved');
  r!.release();
  const again = tasks.reserveNext('be', 'default');
  assert.is(again?.task.id, a.id, 'released: queued again');
  await tasks.claim(a.id, { claimed_by_session: 'w1', expectedVersion: again!.task.version }, alice);
  assert.ok(hasCode(await tasks.apply(a.id, 'release', {}, alice, { heldBy: 'w2' }).catch((e: unknown) => e), 'task_reassigned'));
  assert.equal(tasks.list({ status: 'claimed' }).map((t) => t.id), [a.id]);
  assert.equal(tasks.list({ ready: true }).map((t) => t.id), []);
  assert.equal(tasks.list({ tenant: 'other' }), []);
  assert.is(tasks.counts('default').claimed, 1);
  tasks.drain(true);
  assert.ok(hasCode(await tasks.create({ title: 'c', role: 'be' } as never, alice).catch((e: unknown) => e), 'draining'));
  assert.is(tasks.size, 2);
});

T('what the MCP tools do through Tasks: subtasks park their parent, list by parent, progress starts a claim, complete judges the report', async () => {
  const parent = await tasks.create({ title: 'parent', role: 'be' } as never, alice);
  await tasks.claim(parent.id, { claimed_by_session: 's1' }, alice);
  const child = await tasks.createSubtask({ title: 'child', role: 'qa', parent_task_id: parent.id } as never, alice);
  assert.is(tasks.get(parent.id)?.status, 'waiting_for_subtasks', 'the parent waits for its subtask');
  assert.equal(tasks.list({ parent: parent.id }).map((t) => t.id), [child.id]);
  assert.equal(tasks.list({ parent: parent.id, status: 'done' }), []);
  assert.equal(tasks.list({ parent: parent.id, tenant: 'other' }), []);
  await tasks.claim(child.id, { claimed_by_session: 's2' }, alice);
  const started = await tasks.reportProgress(child.id, { message: 'half way', percent: 50 } as never, alice);
  assert.is(started.status, 'in_progress', 'the first report starts the claimed task');
  assert.equal((await tasks.progress(child.id, alice)).entries.map((e) => e.message), ['half way']);
  const empty = await tasks.complete(child.id, { result_summary: '  ' }, alice).catch((e: unknown) => e as { status: number });
  assert.is(empty.status, 422, 'an empty summary is refused');
  assert.is(tasks.get(child.id)?.status, 'failed', 'and fails the task it held');
  assert.is(tasks.get(parent.id)?.status, 'blocked', 'the parent rolls up with the failure');
});

T.run();
