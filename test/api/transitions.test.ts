import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, boot, type Api, type Res } from './support.ts';

// Every row of DECISIONS.md's transition table, driven over HTTP against a real server.
let a: Api;
const T = suite('task state machine over HTTP');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });

const REFUSAL = { outcome: 'refused', refusal: { reason: 'out of scope' } };

// Bring a fresh task into `state` using only the public endpoints.
async function inState(state: string): Promise<any> {
  switch (state) {
    case 'open': return a.create();
    case 'claimed': return a.claimed();
    case 'in_progress': { const t = await a.claimed(); return ok(await a.verb(t.id, 'progress', { message: 'started' })); }
    case 'waiting_for_subtasks': { const t = await a.claimed(); return ok(await a.verb(t.id, 'wait-for-subtasks', { subtask_count: 2 })); }
    case 'blocked': { const t = await a.create(); return ok(await a.verb(t.id, 'block', { reason: 'needs a human' })); }
    case 'done': { const t = await a.claimed(); return ok(await a.verb(t.id, 'complete', { result_summary: 'did it' })); }
    case 'closed': { const t = await inState('done'); return ok(await a.verb(t.id, 'close')); }
    case 'failed': { const t = await a.create(); return ok(await a.verb(t.id, 'fail', { reason: 'broken' })); }
    case 'refused': { const t = await a.claimed(); return ok(await a.verb(t.id, 'complete', { result_summary: 'no', payload: REFUSAL })); }
    case 'cancelled': { const t = await a.create(); return ok(await a.verb(t.id, 'cancel', { reason: 'not needed' })); }
  }
  throw new Error(`no setup for ${state}`);
}
function ok(r: Res): any {
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.status !== undefined, true);
  return r.body;
}

// Each operation as an HTTP call, with the status code it answers when allowed.
const OPS: Record<string, { verb: string; call: (id: string) => Promise<Res>; status: number }> = {
  claim: { verb: 'claim', call: (id) => a.s.api('POST', `/tasks/${id}/claim`), status: 200 },
  release: { verb: 'release', call: (id) => a.verb(id, 'release', { reason: 'give back' }), status: 200 },
  complete: { verb: 'complete', call: (id) => a.verb(id, 'complete', { result_summary: 'all good' }), status: 200 },
  refuse: { verb: 'complete', call: (id) => a.verb(id, 'complete', { result_summary: 'refusing', payload: REFUSAL }), status: 200 },
  complete_empty: { verb: 'complete', call: (id) => a.verb(id, 'complete', { result_summary: '   ' }), status: 422 },
  complete_violation: { verb: 'complete', call: (id) => a.verb(id, 'complete', { result_summary: 'x', payload: { outcome: 'completed', tests: { passed: -1, failed: 0 } } }), status: 422 },
  fail: { verb: 'fail', call: (id) => a.verb(id, 'fail', { error: 'boom' }), status: 200 },
  close: { verb: 'close', call: (id) => a.verb(id, 'close'), status: 200 },
  close_merged: { verb: 'close', call: (id) => a.verb(id, 'close', { merged: true }), status: 200 },
  block: { verb: 'block', call: (id) => a.verb(id, 'block', { reason: 'waiting on legal' }), status: 200 },
  unblock: { verb: 'unblock', call: (id) => a.verb(id, 'unblock', { reason: 'legal said yes' }), status: 200 },
  wait: { verb: 'wait-for-subtasks', call: (id) => a.verb(id, 'wait-for-subtasks', {}), status: 200 },
  reopen: { verb: 'reopen', call: (id) => a.verb(id, 'reopen', {}), status: 200 },
  cancel: { verb: 'cancel', call: (id) => a.verb(id, 'cancel', {}), status: 200 },
};

// DECISIONS.md, States and transitions: operation -> (allowed sources, target). Complete from open claims the task
// for the caller and completes it in one step; a bad report on an open task is a 422 that changes nothing (below).
const TABLE: [op: string, from: string[], to: string][] = [
  ['claim', ['open'], 'claimed'],
  ['release', ['claimed', 'in_progress'], 'open'],
  ['complete', ['open', 'claimed', 'in_progress', 'waiting_for_subtasks'], 'done'],
  ['refuse', ['claimed', 'in_progress'], 'refused'],
  ['complete_empty', ['claimed', 'in_progress'], 'failed'],
  ['complete_violation', ['claimed', 'in_progress'], 'failed'],
  ['fail', ['open', 'claimed', 'in_progress', 'blocked', 'waiting_for_subtasks'], 'failed'],
  ['close', ['done'], 'closed'],
  ['close_merged', ['blocked', 'done'], 'closed'],
  ['block', ['open', 'claimed', 'in_progress', 'waiting_for_subtasks'], 'blocked'],
  ['unblock', ['blocked'], 'open'],
  ['wait', ['claimed', 'in_progress'], 'waiting_for_subtasks'],
  ['reopen', ['done'], 'open'],
  ['cancel', ['open', 'claimed', 'in_progress', 'waiting_for_subtasks', 'blocked', 'done'], 'cancelled'],
];
const STATES = ['open', 'claimed', 'in_progress', 'waiting_for_subtasks', 'blocked', 'done', 'closed', 'failed', 'refused', 'cancelled'];

T('every allowed (state, operation) pair of the table reaches its target state', async () => {
  for (const [op, froms, to] of TABLE) {
    for (const from of froms) {
      const t = await inState(from);
      assert.is(t.status, from, `setup of ${from}`);
      const r = await OPS[op]!.call(t.id);
      assert.is(r.status, OPS[op]!.status, `${op} from ${from}: ${JSON.stringify(r.body)}`);
      const after = await a.get(t.id);
      assert.is(after.status, to, `${op} from ${from}`);
      assert.is(after.version > t.version, true, `${op} from ${from} bumps the version`);
    }
  }
});

T('every disallowed (state, operation) pair answers 409 "Cannot <verb> task \'<id>\' in state \'<state>\'" naming what the state allows, and changes nothing', async () => {
  let checked = 0;
  for (const from of STATES) {
    for (const [op, froms] of TABLE) {
      if (froms.includes(from)) continue;
      if (from === 'open' && (op === 'complete_empty' || op === 'complete_violation')) continue;
      // A task waiting for subtasks accepts only the valid-summary complete; the failing completes are 409 too.
      const t = await inState(from);
      const r = await OPS[op]!.call(t.id);
      assertError(r, 409, new RegExp(`^Cannot ${OPS[op]!.verb} task '${t.id}' in state '${from}' \\((allowed: [a-z, ():-]+[a-z)]|'${from}' is terminal)\\)$`));
      const after = await a.get(t.id);
      assert.is(after.status, from);
      assert.is(after.version, t.version, `${op} from ${from} left the version alone`);
      checked++;
    }
  }
  assert.ok(checked > 60, `checked ${checked} pairs`);
});

T('a bad completion report on an open task answers 422 and leaves it open (nobody held it, so nothing is failed)', async () => {
  for (const op of ['complete_empty', 'complete_violation']) {
    const t = await inState('open');
    const r = await OPS[op]!.call(t.id);
    assert.is(r.status, 422, JSON.stringify(r.body));
    assert.type(r.body.detail, 'string');
    const after = await a.get(t.id);
    assert.equal([after.status, after.version], ['open', t.version]);
  }
});

T('claim with a stale expected_version answers 409 naming both versions; the right one claims', async () => {
  const t = await a.create();
  const r = await a.s.api('POST', `/tasks/${t.id}/claim?expected_version=${t.version + 5}`);
  assertError(r, 409, /Version conflict.*version 1, expected 6/);
  const good = await a.s.api('POST', `/tasks/${t.id}/claim?expected_version=${t.version}&claimed_by_session=coord-7`);
  assert.is(good.status, 200);
  assert.is(good.body.status, 'claimed');
  assert.is(good.body.claimed_by_session, 'coord-7');
  assert.is(good.body.version, t.version + 1);
});

T('release clears the claim and the task is immediately claimable again', async () => {
  const t = await a.claimed({ role: 'releaser' }, 'sess-r');
  const r = await a.verb(t.id, 'release', { reason: 'agent could not start' });
  assert.is(r.body.status, 'open');
  assert.is(r.body.claimed_by_session, null);
  assert.is(r.body.assigned_agent, null);
  const again = await a.s.api('GET', '/tasks/next/releaser?claimed_by_session=sess-s');
  assert.is(again.status, 200);
  assert.is(again.body.id, t.id);
  assert.is(again.body.claimed_by_session, 'sess-s');
});

T('complete with a prose summary → done, and the archive gets a record', async () => {
  const t = await a.claimed();
  const r = await a.verb(t.id, 'complete', { result_summary: 'Implemented the parser' });
  assert.is(r.status, 200);
  assert.is(r.body.status, 'done');
  assert.is(r.body.result_summary, 'Implemented the parser');
  assert.ok(r.body.completed_at);
  const archive = await a.s.api('GET', '/tasks/archive?limit=500');
  assert.is(archive.body.filter((x: any) => x.task_id === t.id && x.status === 'done').length, 1, 'archived once');
});

T('complete with a structured completed payload (in result_summary) → done', async () => {
  const t = await a.claimed();
  const summary = JSON.stringify({ outcome: 'completed', files_changed: ['a.ts'], tests: { passed: 3, failed: 0 } });
  const r = await a.verb(t.id, 'complete', { result_summary: summary });
  assert.is(r.status, 200);
  assert.is(r.body.status, 'done');
});

T('complete with a validated refusal → refused (terminal), reason kept', async () => {
  const t = await a.claimed();
  const r = await a.verb(t.id, 'complete', { result_summary: 'cannot do this', payload: REFUSAL });
  assert.is(r.status, 200);
  assert.is(r.body.status, 'refused');
  assert.is(r.body.status_reason, 'out of scope');
});

T('complete with an empty summary → 422 carrying the failed task (missing_summary)', async () => {
  const t = await a.claimed();
  const r = await a.verb(t.id, 'complete', { result_summary: '' });
  assert.is(r.status, 422);
  assert.type(r.body.detail, 'string');
  assert.match(r.body.detail, /missing summary/);
  assert.is(r.body.task.id, t.id);
  assert.is(r.body.task.status, 'failed');
  assert.is(r.body.task.failure.type, 'missing_summary');
  assert.is((await a.get(t.id)).status, 'failed');
});

T('complete violating the contract → 422, failed with contract_violation at /tests/passed', async () => {
  const t = await a.claimed();
  const r = await a.verb(t.id, 'complete', { result_summary: 'done', payload: { outcome: 'completed', tests: { passed: 'many', failed: 0 } } });
  assert.is(r.status, 422);
  assert.is(r.body.task.status, 'failed');
  assert.is(r.body.task.failure.type, 'contract_violation');
  assert.is(r.body.task.failure.path, '/tests/passed');
  const refusalWithoutReason = await a.claimed();
  const r2 = await a.verb(refusalWithoutReason.id, 'complete', { result_summary: JSON.stringify({ outcome: 'refused' }) });
  assert.is(r2.status, 422);
  assert.is(r2.body.task.failure.path, '/refusal/reason');
});

T('reopen increments metadata.janitor_reopen_count each time and keeps other metadata', async () => {
  let t = await a.claimed({ metadata: { team: 'core' } });
  for (let i = 1; i <= 2; i++) {
    const done = await a.verb(t.id, 'complete', { result_summary: `round ${i}` });
    assert.is(done.body.status, 'done');
    const r = await a.verb(t.id, 'reopen', { reason: 'gate failed' });
    assert.is(r.status, 200);
    assert.is(r.body.status, 'open');
    assert.is(r.body.metadata.janitor_reopen_count, i);
    assert.is(r.body.metadata.team, 'core');
    assert.is(r.body.result_summary, null);
    const c = await a.s.api('POST', `/tasks/${t.id}/claim`);
    assert.is(c.status, 200);
    t = c.body;
  }
});

T('block holds until unblock; unblock returns the task to open', async () => {
  const t = await a.create({ role: 'blk' });
  const b = await a.verb(t.id, 'block', { reason: 'needs credentials' });
  assert.is(b.body.status, 'blocked');
  assert.is(b.body.status_reason, 'needs credentials');
  assertError(await a.s.api('GET', '/tasks/next/blk'), 404, "No open tasks for role 'blk'");
  const u = await a.verb(t.id, 'unblock', {});
  assert.is(u.body.status, 'open');
  assert.is((await a.s.api('GET', '/tasks/next/blk')).body.id, t.id);
});

T('cancel cascades to every non-terminal descendant and returns the root', async () => {
  const root = await a.create();
  const child = (await a.s.api('POST', '/tasks/self-create', { title: 'child of root', parent_task_id: root.id })).body;
  const grandchild = (await a.s.api('POST', '/tasks/self-create', { title: 'grandchild', parent_task_id: child.id })).body;
  const sibling = (await a.s.api('POST', '/tasks/self-create', { title: 'finished sibling', parent_task_id: root.id })).body;
  await a.s.api('POST', `/tasks/${sibling.id}/claim`);
  await a.verb(sibling.id, 'fail', { reason: 'gave up' });
  const r = await a.verb(root.id, 'cancel', { reason: 'project dropped' });
  assert.is(r.status, 200);
  assert.is(r.body.id, root.id);
  assert.is(r.body.status, 'cancelled');
  assert.is((await a.get(child.id)).status, 'cancelled');
  assert.is((await a.get(grandchild.id)).status, 'cancelled');
  assert.is((await a.get(sibling.id)).status, 'failed', 'a terminal descendant is left alone');
  assertError(await a.verb(root.id, 'cancel', {}), 409, `Cannot cancel task '${root.id}' in state 'cancelled' ('cancelled' is terminal)`);
  const rootNow = await a.get(root.id);
  assert.is(rootNow.status_reason, 'project dropped');
  assert.is(rootNow.version, root.version + 2, 'root: split, then cancel; never blocked by its cancelled children on the way');
  assert.is((await a.get(child.id)).version, child.version + 2, 'child: split, then cancel');
});

T('self-create parks the parent in waiting_for_subtasks; it resumes to done when every child is done', async () => {
  const parent = await a.claimed({ cell_id: 'cell-9', parent_session_id: 'coord-1' });
  const c1 = await a.s.api('POST', '/tasks/self-create', { title: 'part one', parent_task_id: parent.id });
  assert.is(c1.status, 201);
  assert.is(c1.body.parent_task_id, parent.id);
  assert.is(c1.body.cell_id, 'cell-9');
  assert.is(c1.body.parent_session_id, 'coord-1');
  assert.is(c1.body.tenant, parent.tenant);
  assert.is((await a.get(parent.id)).status, 'waiting_for_subtasks');
  const c2 = (await a.s.api('POST', '/tasks/self-create', { title: 'part two', parent_task_id: parent.id })).body;
  for (const c of [c1.body, c2]) await a.s.api('POST', `/tasks/${c.id}/claim`);
  await a.verb(c1.body.id, 'complete', { result_summary: 'one done' });
  assert.is((await a.get(parent.id)).status, 'waiting_for_subtasks', 'still waiting while a child works');
  await a.verb(c2.id, 'complete', { result_summary: 'two done' });
  const p = await a.get(parent.id);
  assert.is(p.status, 'done');
  assert.match(p.result_summary, /Completed via 2 subtasks/);
  const archive = await a.s.api('GET', '/tasks/archive?limit=500');
  assert.is(archive.body.filter((x: any) => x.task_id === parent.id && x.status === 'done').length, 1, 'the rolled-up parent is archived once');
});

T('a waiting parent becomes blocked, naming the child, when a child fails', async () => {
  const parent = await a.create();
  const c1 = (await a.s.api('POST', '/tasks/self-create', { title: 'will fail', parent_task_id: parent.id })).body;
  const c2 = (await a.s.api('POST', '/tasks/self-create', { title: 'will succeed', parent_task_id: parent.id })).body;
  assert.is((await a.get(parent.id)).status, 'waiting_for_subtasks');
  await a.verb(c1.id, 'fail', { reason: 'tests red' });
  await a.s.api('POST', `/tasks/${c2.id}/claim`);
  await a.verb(c2.id, 'complete', { result_summary: 'fine' });
  const p = await a.get(parent.id);
  assert.is(p.status, 'blocked');
  assert.match(p.status_reason, new RegExp(c1.id));
});

T('self-create under an unknown parent answers 404; under a done parent the parent stays done', async () => {
  assertError(await a.s.api('POST', '/tasks/self-create', { title: 'orphan', parent_task_id: '01zzzzzzzzzzzzzzzzzzzzzzzz' }), 404, /not found/);
  const done = await inState('done');
  const c = await a.s.api('POST', '/tasks/self-create', { title: 'follow-up', parent_task_id: done.id });
  assert.is(c.status, 201);
  assert.is((await a.get(done.id)).status, 'done');
});

T('a dependent is not claimable until its dependency is done; closed also satisfies', async () => {
  const dep = await a.create({ role: 'depx' });
  const later = await a.create({ role: 'depy', depends_on: [dep.id] });
  assertError(await a.s.api('GET', '/tasks/next/depy'), 404, "No open tasks for role 'depy'");
  assertError(await a.s.api('POST', `/tasks/${later.id}/claim`), 409, /unresolved dependencies/);
  await a.s.api('POST', `/tasks/${dep.id}/claim`);
  await a.verb(dep.id, 'complete', { result_summary: 'dep done' });
  const got = await a.s.api('GET', '/tasks/next/depy');
  assert.is(got.status, 200);
  assert.is(got.body.id, later.id);

  const closed = await inState('closed');
  const onClosed = await a.create({ role: 'depz', depends_on: [closed.id] });
  assert.is((await a.s.api('GET', '/tasks/next/depz')).body.id, onClosed.id);

  const failed = await inState('failed');
  const onFailed = await a.create({ role: 'depw', depends_on: [failed.id] });
  assertError(await a.s.api('POST', `/tasks/${onFailed.id}/claim`), 409, /unresolved dependencies/);
});

T('owned_files overlap with a claimed task blocks the claim until the owner finishes', async () => {
  const owner = await a.claimed({ role: 'files', owned_files: ['src/a.ts', 'src/b.ts'] });
  const other = await a.create({ role: 'files', owned_files: ['src/b.ts'] });
  assertError(await a.s.api('POST', `/tasks/${other.id}/claim`), 409, /File ownership conflict: src\/b.ts/);
  assertError(await a.s.api('GET', '/tasks/next/files'), 404);
  await a.verb(owner.id, 'complete', { result_summary: 'released the files' });
  const got = await a.s.api('GET', '/tasks/next/files');
  assert.is(got.status, 200);
  assert.is(got.body.id, other.id);
});

T('next with parent_session_id only hands out tasks created under that coordinator session', async () => {
  const other = await a.create({ role: 'coord', priority: 0 });
  const mine = await a.create({ role: 'coord', priority: 5, parent_session_id: 'co-A' });
  assertError(await a.s.api('GET', '/tasks/next/coord?parent_session_id=co-B'), 404);
  assert.is((await a.s.api('GET', '/tasks/next/coord?parent_session_id=co-A')).body.id, mine.id);
  assert.is((await a.s.api('GET', '/tasks/next/coord')).body.id, other.id, 'the skipped task is still queued');
});

T('unknown or malformed ids answer 404 on every verb', async () => {
  for (const id of ['01zzzzzzzzzzzzzzzzzzzzzzzz', '..%2Fetc', 'UPPER']) {
    for (const v of ['claim', 'complete', 'fail', 'release', 'reopen', 'close', 'cancel', 'block', 'unblock', 'wait-for-subtasks', 'prioritize', 'progress']) {
      const body = v === 'complete' ? { result_summary: 'x' } : {};
      const r = await a.s.api('POST', `/tasks/${id}/${v}`, body);
      assert.is(r.status, 404, `${v} ${id}: ${JSON.stringify(r.body)}`);
      assert.type(r.body.detail, 'string');
    }
  }
});

T.run();
