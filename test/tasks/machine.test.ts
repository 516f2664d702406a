import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { STATUS_OF_CODE } from '../../src/server/errors.ts';
import { TransitionRefused } from '../../src/tasks/errors.ts';
import {
  ACTIVE, TERMINAL, TRANSITIONS, allowedVerbs, claimBlockers, depSatisfied, isTerminal, ownerKey, runId, transition, versionConflict,
  type TaskOp, type TransitionInput,
} from '../../src/tasks/machine.ts';
import { TASK_STATUSES, type Task, type TaskStatus } from '../../src/tasks/schema.ts';
import { T0, at, task } from './fixtures.ts';

const NOW = at(60);
const NON_TERMINAL: TaskStatus[] = ['open', 'claimed', 'in_progress', 'done', 'blocked', 'waiting_for_subtasks'];
// Written from DECISIONS.md's table, independently of TRANSITIONS: op -> [allowed from-states, target].
const EXPECTED: Record<TaskOp, [TaskStatus[], TaskStatus]> = {
  claim: [['open'], 'claimed'],
  start: [['claimed'], 'in_progress'],
  release: [['claimed', 'in_progress'], 'open'],
  complete: [['open', 'claimed', 'in_progress', 'waiting_for_subtasks'], 'done'],
  refuse: [['claimed', 'in_progress'], 'refused'],
  fail_summary: [['claimed', 'in_progress'], 'failed'],
  fail_contract: [['claimed', 'in_progress'], 'failed'],
  fail: [['open', 'claimed', 'in_progress', 'blocked', 'waiting_for_subtasks'], 'failed'],
  close: [['done'], 'closed'],
  block: [['open', 'claimed', 'in_progress', 'waiting_for_subtasks'], 'blocked'],
  unblock: [['blocked'], 'open'],
  wait: [['claimed', 'in_progress'], 'waiting_for_subtasks'],
  split: [['open', 'claimed', 'in_progress'], 'waiting_for_subtasks'],
  reopen: [['done'], 'open'],
  cancel: [NON_TERMINAL, 'cancelled'],
  gate_fail: [['done'], 'failed'],
  merge_block: [['done'], 'blocked'],
  close_merged: [['blocked', 'done'], 'closed'],
};
const VERB: Record<TaskOp, string> = {
  claim: 'claim', start: 'start', release: 'release', complete: 'complete', refuse: 'complete', fail_summary: 'complete',
  fail_contract: 'complete', fail: 'fail', close: 'close', block: 'block', unblock: 'unblock', wait: 'wait-for-subtasks',
  split: 'split', reopen: 'reopen', cancel: 'cancel', gate_fail: 'fail', merge_block: 'block', close_merged: 'close',
};
const INPUT: Record<TaskOp, TransitionInput> = {
  claim: { claimed_by_session: 'sess-2', assigned_agent: 'agent-2', node_id: 'node-2' },
  start: {}, release: { reason: 'agent could not start' },
  complete: { result_summary: 'did it' },
  refuse: { result_summary: '{"outcome":"refused"}', payload: { outcome: 'refused', refusal: { reason: 'out of scope' } } },
  fail_summary: { reason: 'completion missing summary', result_summary: '' },
  fail_contract: { reason: 'Expected integer', path: '/tests/passed', result_summary: '{}' },
  fail: { error: 'boom' }, close: {}, block: { reason: 'needs a human' }, unblock: { reason: 'fixed' },
  wait: { subtask_count: 3 }, split: { subtask_count: 1 }, reopen: { reason: 'gate failed' }, cancel: { reason: 'not needed' },
  gate_fail: { reason: 'required gate test failed' }, merge_block: { reason: 'merge conflict: a.txt' }, close_merged: {},
};

// A task in `status` that has been claimed once and carries a finished run's fields.
const inState = (status: TaskStatus): Task => task('t1', {
  status, claimed_by_session: 'sess-1', assigned_agent: 'agent-1', node_id: 'node-1', claimed_at: at(1), claim_count: 1,
  version: 4, metadata: { janitor_reopen_count: 1, keep: 'me' }, result_summary: 'old', completed_at: at(2),
});

// What each op must set besides status and updated_at (DECISIONS.md).
const SIDE: Record<TaskOp, (after: Task, before: Task) => void> = {
  claim: (a) => {
    assert.equal([a.claimed_by_session, a.assigned_agent, a.node_id, a.claimed_at, a.claim_count], ['sess-2', 'agent-2', 'node-2', NOW, 2]);
  },
  start: (a, b) => assert.equal(a.claimed_by_session, b.claimed_by_session),
  release: (a) => {
    assert.equal([a.claimed_by_session, a.assigned_agent, a.node_id, a.claimed_at], [null, null, null, null]);
    assert.is(a.status_reason, 'agent could not start');
    assert.is(a.claim_count, 1, 'claim count is history, kept');
  },
  complete: (a, b) => {
    assert.is(a.result_summary, 'did it'); assert.is(a.completed_at, NOW); assert.is(a.failure, null);
    assert.is(a.claim_count, b.claim_count + (b.status === 'open' ? 1 : 0), 'from open it is claimed in the same step');
  },
  refuse: (a) => { assert.is(a.status_reason, 'out of scope'); assert.is(a.completed_at, NOW); assert.is(a.failure, null); },
  fail_summary: (a) => { assert.equal(a.failure, { type: 'missing_summary', reason: 'completion missing summary' }); assert.is(a.completed_at, NOW); },
  fail_contract: (a) => assert.equal(a.failure, { type: 'contract_violation', reason: 'Expected integer', path: '/tests/passed' }),
  fail: (a) => { assert.equal(a.failure, { type: 'failed', reason: 'boom' }); assert.is(a.completed_at, NOW); },
  close: (a, b) => assert.is(a.completed_at, b.completed_at),
  block: (a) => assert.is(a.status_reason, 'needs a human'),
  unblock: (a) => { assert.is(a.status_reason, 'fixed'); assert.is(a.claimed_by_session, null); },
  wait: (a) => assert.is(a.status_reason, 'Split into 3 subtasks'),
  split: (a) => assert.is(a.status_reason, 'Split into 1 subtasks'),
  reopen: (a) => {
    assert.equal(a.metadata, { janitor_reopen_count: 2, keep: 'me' });
    assert.equal([a.result_summary, a.completed_at, a.failure, a.claimed_by_session], [null, null, null, null]);
  },
  cancel: (a) => { assert.is(a.status_reason, 'not needed'); assert.is(a.completed_at, NOW); },
  gate_fail: (a) => { assert.equal(a.failure, { type: 'gate_failed', reason: 'required gate test failed' }); assert.is(a.completed_at, NOW); },
  merge_block: (a) => assert.is(a.status_reason, 'merge conflict: a.txt'),
  close_merged: (a, b) => { assert.is(a.completed_at, b.completed_at); assert.is(a.status_reason, 'merged by hand'); },
};

const walk = suite('state machine table');

walk('every (status, op) pair: allowed ones reach the target with their side fields, the rest answer 409', () => {
  let allowed = 0, refused = 0;
  for (const status of TASK_STATUSES) {
    for (const op of Object.keys(EXPECTED) as TaskOp[]) {
      const [from, to] = EXPECTED[op];
      const before = inState(status);
      if (from.includes(status)) {
        const after = transition(before, op, INPUT[op], NOW);
        assert.is(after.status, to, `${status} --${op}-->`);
        assert.is(after.updated_at, NOW);
        assert.is(after.version, 4, 'the store bumps the version, not the machine');
        SIDE[op](after, before);
        allowed++;
      } else {
        try {
          transition(before, op, INPUT[op], NOW);
          assert.unreachable(`${status} --${op}--> should be refused`);
        } catch (err) {
          // A refusal as data; the server's one table answers it with 409.
          assert.instance(err, TransitionRefused);
          assert.is(STATUS_OF_CODE[(err as TransitionRefused).code], 409);
          assert.equal((err as TransitionRefused).data, { task_id: 't1', status, op, allowed: allowedVerbs(status) });
          const allowed = isTerminal(status) ? `'${status}' is terminal` : `allowed: ${allowedVerbs(status).join(', ')}`;
          assert.is((err as TransitionRefused).detail, `Cannot ${VERB[op]} task 't1' in state '${status}' (${allowed})`);
        }
        refused++;
      }
    }
  }
  assert.is(allowed + refused, TASK_STATUSES.length * Object.keys(EXPECTED).length);
  const tableSize = Object.values(TRANSITIONS).reduce((n: number, row: object) => n + Object.keys(row).length, 0);
  assert.is(tableSize, allowed, 'the table has no pair the decisions do not list');
});

walk('terminal states leave nothing; done is not terminal', () => {
  for (const s of TASK_STATUSES) assert.is(isTerminal(s), ['failed', 'closed', 'refused', 'cancelled'].includes(s), s);
  for (const s of TERMINAL) assert.equal(TRANSITIONS[s], {});
  assert.is(ACTIVE.has('done'), false);
  assert.is(ACTIVE.has('waiting_for_subtasks'), true);
});

walk('a 409 names the verbs the state allows: blocked offers unblock, fail, cancel and close with merged', () => {
  assert.equal(allowedVerbs('blocked'), ['unblock', 'fail', 'cancel', 'close (merged: true)']);
  assert.equal(allowedVerbs('done'), ['close', 'reopen', 'cancel']);
  assert.equal(allowedVerbs('closed'), []);
  try {
    transition(inState('blocked'), 'complete', { result_summary: 'x' }, NOW);
    assert.unreachable();
  } catch (err) {
    assert.is((err as TransitionRefused).detail, "Cannot complete task 't1' in state 'blocked' (allowed: unblock, fail, cancel, close (merged: true))");
  }
});

walk('the orchestrator\'s claim records the agent branch; release, unblock and reopen clear it', () => {
  const claimed = transition(task('x'), 'claim', { claimed_by_session: 'backend-1', branch: 'agent/backend-1' }, NOW);
  assert.is(claimed.branch, 'agent/backend-1');
  assert.is(transition(claimed, 'complete', { result_summary: 'ok' }, NOW).branch, 'agent/backend-1', 'done keeps it until the merge');
  assert.is(transition(claimed, 'release', {}, NOW).branch, null);
  assert.is(transition(task('y'), 'claim', { claimed_by_session: 'cli' }, NOW).branch, null, 'a client claim has no branch');
});

walk('a transition never mutates its input', () => {
  const before = inState('done');
  const copy = structuredClone(before);
  transition(before, 'reopen', {}, NOW);
  assert.equal(before, copy);
});

walk('fail takes the orchestrator failure type and falls back to a default reason', () => {
  const t = transition(inState('in_progress'), 'fail', { failure_type: 'agent_exit' }, NOW);
  assert.equal(t.failure, { type: 'agent_exit', reason: 'failed' });
  const r = transition(inState('claimed'), 'release', { count_retry: true }, NOW);
  assert.is(r.retry_count, 1);
});

walk('the first reopen of a task without a counter sets janitor_reopen_count to 1', () => {
  const t = transition(task('a', { status: 'done' }), 'reopen', {}, NOW);
  assert.is(t.metadata.janitor_reopen_count, 1);
});

const guards = suite('claim guards');

guards('a task whose dependency is not done or closed cannot be claimed', () => {
  const deps = new Map([['a', task('a', { status: 'done' })], ['b', task('b', { status: 'in_progress' })], ['c', task('c', { status: 'closed' })]]);
  const t = task('t', { depends_on: ['a', 'b', 'c', 'gone'] });
  assert.is(claimBlockers(t, (id) => deps.get(id), new Map()), "Task 't' has unresolved dependencies: b, gone");
  const ok = task('t', { depends_on: ['a', 'c'] });
  assert.is(claimBlockers(ok, (id) => deps.get(id), new Map()), null);
});

guards('done work on an agent branch satisfies a dependent only once merged and closed', () => {
  assert.is(depSatisfied({ status: 'done', branch: null }), true, 'completed by a person or client');
  assert.is(depSatisfied({ status: 'done', branch: 'agent/backend-1' }), false, 'waiting for gates and merge');
  assert.is(depSatisfied({ status: 'closed', branch: 'agent/backend-1' }), true);
  assert.is(depSatisfied({ status: 'blocked', branch: null }), false);
  const deps = new Map([['a', task('a', { status: 'done', branch: 'agent/backend-1' })]]);
  assert.is(claimBlockers(task('t', { depends_on: ['a'] }), (id) => deps.get(id), new Map()), "Task 't' has unresolved dependencies: a");
});

guards('owned files held by a working task block the claim; its own files do not', () => {
  const owner = task('o', { status: 'claimed', owned_files: ['src/a.ts'] });
  const owners = new Map([[ownerKey('default', 'src/a.ts'), owner]]);
  const t = task('t', { owned_files: ['src/b.ts', 'src/a.ts'] });
  assert.is(claimBlockers(t, () => undefined, owners), "File ownership conflict: src/a.ts already claimed by task 'o'");
  assert.is(claimBlockers(owner, () => undefined, owners), null);
  // Another tenant's task owning the same path neither blocks nor is named.
  assert.is(claimBlockers(task('u', { tenant: 'acme', owned_files: ['src/a.ts'] }), () => undefined, owners), null);
});

guards('version compare-and-set detail and run ids', () => {
  assert.is(versionConflict({ id: 'x', version: 3 }, 3), null);
  assert.is(versionConflict({ id: 'x', version: 3 }, undefined), null);
  assert.is(versionConflict({ id: 'x', version: 3 }, 2), 'Version conflict: task x is at version 3, expected 2');
  assert.is(runId(task('x')), null);
  const claimed = transition(task('x'), 'claim', { claimed_by_session: 'backend-1' }, T0);
  assert.is(runId(claimed), 'backend-1#1');
  const again = transition(transition(claimed, 'release', {}, T0), 'claim', { claimed_by_session: 'backend-2' }, T0);
  assert.is(runId(again), 'backend-2#2');
});

walk.run();
guards.run();
