// The bodies of /status, /dashboard/data and /slo, the export rows and the run's trace context, as plain values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agentEnv, runTraceparent, traceIdOf } from '../../src/runner/index.ts';
import { csvRow } from '../../src/lib/csv.ts';
import { buildDashboard, liveCosts } from '../../src/observe/dashboard.ts';
import { agentRows, selectTasks } from '../../src/observe/export.ts';
import { ReadCache } from '../../src/observe/read-cache.ts';
import { buildSlo, errorBudget, percentile } from '../../src/observe/slo.ts';
import { buildStatus, type BoardView } from '../../src/observe/status.ts';
import type { RunRecord, SessionRecord } from '../../src/agents/index.ts';
import type { Task } from '../../src/tasks/index.ts';

const T0 = '2026-03-01T10:00:00.000Z';
const task = (id: string, status: Task['status'], role = 'backend', extra: Partial<Task> = {}): Task => ({
  id, title: `task ${id}`, description: '', role, priority: 2, scope: 'medium', complexity: 'medium', status, assigned_agent: null,
  claimed_by_session: null, parent_session_id: null, parent_task_id: null, depends_on: [], owned_files: [], cell_id: null, tenant: 'default',
  version: 1, estimated_minutes: 30, model: null, result_summary: null, failure: null, status_reason: null, branch: null, metadata: {},
  chat_context: null, node_id: null, retry_count: 0, max_retries: 2, claim_count: 0, created_at: T0, updated_at: T0, claimed_at: null, completed_at: null, ...extra,
});
const run = (task_id: string, outcome: RunRecord['outcome'], seconds: number, gates: boolean | null, cost: number | null = null): RunRecord =>
  ({ session_id: `backend-${task_id}`, task_id, adapter: 'claude', model: 'opus', outcome, seconds, gates_passed: gates, cost_usd: cost, finished_at: '2026-03-01T11:00:00.000Z' });
const session = (sid: string, taskId: string, status: SessionRecord['status'], stalled = false): SessionRecord => ({
  session_id: sid, role: 'backend', adapter: 'claude', model: 'opus', status, pid: 42, task_id: taskId, task_title: 't', tenant: 'default', worktree: '/w', branch: `agent/${sid}`,
  started_at: '2026-03-01T10:00:00.000Z', ended_at: null, exit_code: null, node_id: null, stalled, sandbox: 'bwrap', token_id: null, gates_passed: null, merge_deferred: null, trace_id: 'ab'.repeat(16),
});

function view(tasks: Task[], sessions: SessionRecord[] = [], costs: Record<string, number> = {}): BoardView {
  const counts: Record<string, number> = { total: tasks.length };
  for (const t of tasks) counts[t.status] = (counts[t.status] ?? 0) + 1;
  return { tasks, counts, sessions, costOf: (id) => costs[id] ?? 0, progressOf: (id) => (id === 'a' ? { percent: 30, message: 'tests', ts: T0 } : undefined), nowMs: Date.parse('2026-03-01T10:01:30.000Z') };
}

test('status: counts per status at the top, agents live, cost, per role with costs, summary, the cache figures', () => {
  const v = view([task('a', 'in_progress'), task('b', 'open', 'qa'), task('c', 'done'), task('d', 'failed', 'qa')], [session('s1', 'a', 'running'), session('s2', 'c', 'exited')], { c: 1.25, d: 0.5 });
  const s = buildStatus(v, { version: '1.2.3', uptimeS: 12.5, maxAgents: 4, draining: false, seq: 7, cache: { cache_hit_rate: 0.5, cache_hits: 1, cache_misses: 1 }, sandbox: { mode: 'none', reason: 'bwrap did not start' } });
  assert.equal([s.open, s.in_progress, s.done, s.failed, s.closed, s.total, s.agents, s.cost_usd], [1, 1, 1, 1, 0, 4, 1, 1.75]);
  assert.equal(s.per_role.map((r) => [r.role, r.total, r.cost_usd]), [['backend', 2, 1.25], ['qa', 2, 0.5]]);
  assert.equal(s.summary, { total: 4, open: 1, claimed: 0, done: 1, failed: 1, agents: 1, cost_usd: 1.75, max_agents: 4 });
  assert.is(s.metrics.cache_hit_rate, 0.5);
  assert.is(s.version, '1.2.3');
  assert.equal(s.agents_sandbox, { mode: 'none', reason: 'bwrap did not start' }, 'an unsandboxed orchestrator is said in /status');
});

test('read cache: the same version is a hit, a new version a miss; the rate comes from those counts', () => {
  const seen: boolean[] = [];
  const c = new ReadCache((hit) => seen.push(hit));
  let builds = 0;
  const body = () => ({ n: ++builds });
  assert.is(c.get('k', '1:100', body), '{"n":1}');
  assert.is(c.get('k', '1:100', body), '{"n":1}');
  assert.is(c.get('k', '2:100', body), '{"n":2}');
  assert.is(c.get('k', '2:100', body), '{"n":2}');
  assert.equal(seen, [false, true, false, true]);
  assert.equal(c.stats(), { cache_hit_rate: 0.5, cache_hits: 2, cache_misses: 2, cache_lookups: 4 });
});

test('dashboard: stats, cards with progress, agents with runtime and trace, live costs against the budget, alerts', () => {
  const v = view([task('a', 'in_progress', 'backend', { claimed_by_session: 's1' }), task('b', 'blocked', 'qa', { status_reason: 'needs a decision' }), task('d', 'failed')], [session('s1', 'a', 'running', true)], { d: 8.5 });
  const d = buildDashboard(v, { get: (id) => v.tasks.find((t) => t.id === id), budgetUsd: 10, warnPct: 80, draining: false, seq: 9, ts: T0, you: null });
  assert.equal(d.stats, { total: 3, open: 0, claimed: 0, in_progress: 1, done: 0, failed: 1, agents: 1, cost_usd: 8.5 });
  assert.equal([d.tasks[0]!.progress, d.tasks[0]!.progress_message, d.tasks[1]!.progress], [30, 'tests', null]);
  assert.equal([d.agents[0]!.id, d.agents[0]!.runtime_s, d.agents[0]!.task_ids, d.agents[0]!.trace_id], ['s1', 90, ['a'], 'ab'.repeat(16)]);
  assert.equal(d.live_costs, { spent_usd: 8.5, budget_usd: 10, percentage_used: 85, should_warn: true, should_stop: false });
  assert.equal(d.alerts.map((a) => a.level + ': ' + a.message), ['warning: Budget 85% used: $8.5 of $10', 'warning: 1 failed task(s)', 'info: 1 blocked task(s) wait for a person', 'warning: Agent s1 looks stalled']);
  assert.equal(liveCosts(3, 0, 80), { spent_usd: 3, budget_usd: 0, percentage_used: 0, should_warn: false, should_stop: false }, 'no budget: never warns');
  assert.is(liveCosts(12, 10, 80).should_stop, true);
});

test('slo: task success from the board, merge success and gate pass from runs, run p95, and the error budget', () => {
  const runs = [run('a', 'succeeded', 100, true), run('b', 'succeeded', 300, true), run('c', 'failed', 50, true), run('d', 'failed', 20, false), run('e', 'released', 5, null)];
  const r = buildSlo({ counts: { done: 5, closed: 13, failed: 2 }, runs }, { task_success: 0.9, merge_success: 0.95, gate_pass: 0.8, run_p95_s: 200 });
  assert.equal(r.slos.map((s) => [s.name, s.current, s.samples, s.status, s.met]), [
    ['task_success', 0.9, 20, 'met', true], ['merge_success', 0.6667, 3, 'breached', false],
    ['gate_pass', 0.75, 4, 'breached', false], ['run_p95_s', 300, 2, 'breached', false],
  ]);
  assert.equal(r.error_budget, { total_tasks: 20, failed_tasks: 2, budget_total: 2, budget_remaining: 0, budget_fraction: 0, burn_rate: 1, is_depleted: false, status: 'warning' });
  assert.is(errorBudget(20, 3, 0.9).is_depleted, true);
  assert.is(errorBudget(0, 0, 0.9).status, 'healthy', 'nothing finished yet');
  const empty = buildSlo({ counts: {}, runs: [] }, { task_success: 0.9, merge_success: 0.95, gate_pass: 0.8, run_p95_s: 200 });
  assert.ok(empty.slos.every((s) => s.status === 'no_data' && s.met && s.current === null));
  assert.equal([percentile([5, 1, 3], 0.5), percentile([], 0.95)], [3, null]);
});

test('exports: filters by status, role, agent and time; agent rows from runs then live sessions; CSV cells spreadsheets would run are neutralised', () => {
  const tasks = [task('a', 'open', 'backend', { created_at: '2026-03-01T09:00:00.000Z' }), task('b', 'done', 'qa', { assigned_agent: 'x' }), task('c', 'open', 'qa')];
  assert.equal(selectTasks(tasks, { status: ['open'] }).map((t) => t.id), ['a', 'c']);
  assert.equal(selectTasks(tasks, { role: ['qa'], assigned_agent: 'x' }).map((t) => t.id), ['b']);
  assert.equal(selectTasks(tasks, { created_after: '2026-03-01T09:30:00Z' }).map((t) => t.id), ['b', 'c']);
  assert.equal(selectTasks(tasks, { limit: 1 }).map((t) => t.id), ['a']);
  const rows = agentRows([run('b', 'succeeded', 60, true, 0.2), run('zz', 'failed', 1, null)], [session('s1', 'a', 'running')], (id) => tasks.find((t) => t.id === id), {});
  assert.equal(rows.map((r) => [r.session_id, r.status, r.outcome, r.started_at]), [['backend-b', 'finished', 'succeeded', '2026-03-01T10:59:00.000Z'], ['s1', 'running', 'running', '2026-03-01T10:00:00.000Z']], 'a run of a task the caller cannot see is left out');
  assert.equal(agentRows([run('b', 'succeeded', 60, true)], [session('s1', 'a', 'running')], (id) => tasks.find((t) => t.id === id), { outcome: ['failed'] }), []);
  assert.is(csvRow(['=HYPERLINK("x")', '-1', 3, 'a,b', null], true), `"'=HYPERLINK(""x"")",'-1,3,"a,b",\r\n`);
  assert.is(csvRow(['=x'], false), '=x\r\n', 'the compliance export keeps its bytes');
});

test('trace: each run gets a W3C traceparent (sampled) and keeps the trace its task was created with', () => {
  const bytes = Uint8Array.from({ length: 24 }, (_, i) => i + 1);
  const fresh = runTraceparent(undefined, bytes);
  assert.is(fresh.traceparent, '00-0102030405060708090a0b0c0d0e0f10-1112131415161718-01');
  assert.is(fresh.traceId, '0102030405060708090a0b0c0d0e0f10');
  const joined = runTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', bytes);
  assert.is(joined.traceparent, '00-4bf92f3577b34da6a3ce929d0e0e4736-1112131415161718-01');
  assert.is(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01'), null, 'an all-zero trace id is invalid');
  assert.is(traceIdOf('not a traceparent'), null);
  const env = agentEnv({ base: { PATH: '/bin', TRACEPARENT: '00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01' }, serverUrl: 'http://x', taskId: 't', sessionId: 's', token: 'k', traceparent: fresh.traceparent });
  assert.is(env.TRACEPARENT, fresh.traceparent, 'the run\'s own, not the server\'s');
  assert.is(agentEnv({ base: { TRACEPARENT: 'x' }, serverUrl: 'http://x', taskId: 't', sessionId: 's', token: 'k' }).TRACEPARENT, undefined);
});

test.run();
