import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  compareRuns, costFromLogText, decideSession, fairQueues, gateVerdict, newSessionId, splitLines, stallChange, syntheticEntries, type RunRecord,
} from '../../src/agents/index.ts';
import { ID_PATTERN } from '../../src/store/ids.ts';
import { newTask } from '../../src/tasks/index.ts';

const D = suite('decideSession');
const task = (o: Partial<{ status: string; claimed_by_session: string | null; retry_count: number; max_retries: number }> = {}) =>
  ({ status: 'in_progress', claimed_by_session: 's1', retry_count: 0, max_retries: 2, ...o }) as never;

D('a running agent on its task is left alone', () => {
  assert.equal(decideSession({ sid: 's1', status: 'running', exitCode: null, task: task() }), { kind: 'wait' });
});
D('a task that reached done is finished (gates, merge) even while the agent still runs', () => {
  assert.equal(decideSession({ sid: 's1', status: 'running', exitCode: null, task: task({ status: 'done' }) }).kind, 'finish');
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task({ status: 'done' }) }).kind, 'finish');
});
D('exit 0 without a report fails the task with agent_exit', () => {
  const a = decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task() });
  assert.equal(a, { kind: 'exit', op: 'fail', reason: 'exited without reporting completion', countRetry: false, outcome: 'failed' });
});
D('a crash is released for retry while retries remain, then failed', () => {
  const retry = decideSession({ sid: 's1', status: 'exited', exitCode: 3, task: task({ retry_count: 1 }) });
  assert.equal(retry.kind === 'exit' && [retry.op, retry.countRetry, retry.reason], ['release', true, 'agent exited with code 3']);
  const last = decideSession({ sid: 's1', status: 'exited', exitCode: 3, task: task({ retry_count: 2 }) });
  assert.equal(last.kind === 'exit' && last.op, 'fail');
  assert.match(last.kind === 'exit' ? last.reason : '', /retries exhausted \(2 of 2\)/);
});
D('a person\'s kill blocks the task naming who killed it, whatever retries remain; it is recorded as killed', () => {
  const a = decideSession({ sid: 's1', status: 'killed', exitCode: null, task: task(), killedBy: 'tok_ops' });
  assert.equal(a, { kind: 'exit', op: 'block', reason: 'killed by tok_ops', countRetry: false, outcome: 'killed' });
  const noRetries = decideSession({ sid: 's1', status: 'killed', exitCode: null, task: task({ retry_count: 2 }), killedBy: 'env' });
  assert.equal(noRetries.kind === 'exit' && [noRetries.op, noRetries.reason], ['block', 'killed by env']);
});
D('a session whose task moved on (released, claimed by another, terminal) is retired', () => {
  assert.equal(decideSession({ sid: 's1', status: 'running', exitCode: null, task: task({ status: 'open', claimed_by_session: null }) }), { kind: 'retire', outcome: 'released' });
  assert.equal(decideSession({ sid: 's1', status: 'running', exitCode: null, task: task({ claimed_by_session: 's2' }) }).kind, 'retire');
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task({ status: 'failed' }) }), { kind: 'retire', outcome: 'failed' });
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task({ status: 'closed' }) }), { kind: 'retire', outcome: 'succeeded' });
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: undefined }).kind, 'retire');
});
D('a parked task (waiting for subtasks, blocked) keeps its session and worktree', () => {
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task({ status: 'waiting_for_subtasks' }) }), { kind: 'wait' });
  assert.equal(decideSession({ sid: 's1', status: 'exited', exitCode: 0, task: task({ status: 'blocked' }) }), { kind: 'wait' });
});
D('a session whose agent never started gives the task back without counting a retry', () => {
  const a = decideSession({ sid: 's1', status: 'starting', exitCode: null, task: task({ status: 'claimed' }) });
  assert.equal(a.kind === 'exit' && [a.op, a.countRetry], ['release', false]);
});

const G = suite('gateVerdict');
G('passing gates merge; failures reopen up to max_reopens, then fail', () => {
  assert.equal(gateVerdict({ pass: true, failedRequired: [], reopens: 5, maxReopens: 2 }), { kind: 'merge' });
  assert.equal(gateVerdict({ pass: false, failedRequired: ['tests'], reopens: 1, maxReopens: 2 }).kind, 'reopen');
  const f = gateVerdict({ pass: false, failedRequired: ['tests', 'lint'], reopens: 2, maxReopens: 2 });
  assert.equal(f.kind, 'fail');
  assert.match(f.kind === 'fail' ? f.reason : '', /tests, lint/);
});

const Q = suite('fairQueues and session ids');
Q('every (tenant, role) queue gets a turn, starting after the one served last', () => {
  const open = [{ tenant: 'default', role: 'qa' }, { tenant: 'default', role: 'backend' }, { tenant: 'acme', role: 'backend' }, { tenant: 'default', role: 'qa' }];
  const names = (last: string | null) => fairQueues(open, last).map((q) => `${q.tenant}/${q.role}`);
  assert.equal(names(null), ['acme/backend', 'default/backend', 'default/qa']);
  assert.equal(names('default\u0000backend'), ['default/qa', 'acme/backend', 'default/backend']);
  assert.equal(names('default\u0000qa'), ['acme/backend', 'default/backend', 'default/qa']);
});
Q('session ids are <role>-<8 hex>, valid ids of at most 64 characters', () => {
  assert.is(newSessionId('backend', '0a1b2c3d'), 'backend-0a1b2c3d');
  const long = newSessionId('r'.repeat(64), 'deadbeef');
  assert.ok(long.length <= 64 && ID_PATTERN.test(long), long);
  assert.ok(ID_PATTERN.test(newSessionId('_x', '00000000')));
});

const R = suite('run metrics');
const run = (o: Partial<RunRecord>): RunRecord => ({ session_id: 's', task_id: 't', adapter: 'generic', model: null, outcome: 'succeeded', seconds: 10, gates_passed: true, cost_usd: null, finished_at: '', ...o });
R('one record per (adapter, model), sorted by adapter then model, with rates', () => {
  const m = compareRuns([
    run({ adapter: 'generic', model: 'b', seconds: 10 }), run({ adapter: 'generic', model: 'b', outcome: 'failed', gates_passed: false, seconds: 99 }),
    run({ adapter: 'claude', model: 'x', cost_usd: 0.5 }), run({ adapter: 'generic', model: 'a', outcome: 'killed', gates_passed: null }),
    run({ adapter: 'claude', model: 'x', cost_usd: 1.5, seconds: 20 }),
  ]);
  assert.equal(m.map((r) => `${r.adapter}/${r.model}`), ['claude/x', 'generic/a', 'generic/b']);
  assert.equal(m[0], { adapter: 'claude', model: 'x', tasks: 2, succeeded: 2, failed: 0, success_rate: 1, avg_completion_s: 15, cost_per_task_usd: 1, gate_pass_rate: 1 });
  assert.equal(m[1]!.gate_pass_rate, null);
  assert.equal(m[2]!.success_rate, 0.5);
  assert.equal(m[2]!.gate_pass_rate, 0.5);
  assert.equal(m[2]!.avg_completion_s, 10);
});
R('the cost is the last total_cost_usd the agent printed', () => {
  assert.is(costFromLogText('{"type":"result","total_cost_usd":0.25}\n{"total_cost_usd": 1.5e-1}\n'), 0.15);
  assert.is(costFromLogText('no cost here'), null);
});

const L = suite('log lines and stalls');
L('lines carry the byte offset just after them; a partial last line waits', () => {
  const { lines, consumed } = splitLines(Buffer.from('héllo\nworld\r\npart'), 100);
  assert.equal(lines, [{ text: 'héllo', end: 107 }, { text: 'world', end: 114 }]);
  assert.is(consumed, 14);
});
L('a stall is reported once when it starts and once when it ends', () => {
  assert.is(stallChange(false, true), 'stalled');
  assert.is(stallChange(true, true), null);
  assert.is(stallChange(true, false), 'recovered');
});
L('synthetic entries name the task of every claimed or in-progress task', () => {
  const base = newTask({ title: 'A' }, { id: 'a1', now: '2026-11-21T00:00:00.000Z', tenant: 'default' });
  const tasks = [
    { ...base, status: 'claimed' as const, claimed_by_session: 'ext-1' },
    { ...base, id: 'b1', title: 'B', status: 'in_progress' as const, claimed_by_session: null },
    { ...base, id: 'c1', status: 'open' as const },
  ];
  const e = syntheticEntries(tasks);
  assert.equal(e.map((x) => [x.session_id, x.task_id, x.task_title, x.synthetic, x.status]), [['ext-1', 'a1', 'A', true, 'starting'], ['task-b1', 'b1', 'B', true, 'running']]);
});

for (const s of [D, G, Q, R, L]) s.run();
