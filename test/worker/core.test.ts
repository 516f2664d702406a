// The worker's pure core: flags, what an answer means for a report, a heartbeat, a fused call or a claim
// without an answer, the report a session's end makes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { labelsOf } from '../../src/cli/worker.ts';
import {
  afterHeartbeat, claimingFate, claimingRecord, endReport, killsOf, nextOf, stateHeadOf, outcomeOf, registration, rotate, versionProblem, waitSeconds, workerOptions, type WorkerSession,
} from '../../src/worker/index.ts';

const F = suite('worker core');
const host = { hostname: 'box-1', cwd: '/work/repo' };
const ok = (flags: Record<string, string>, labels: string[] = [], env: Record<string, string> = {}) => {
  const r = workerOptions({ server: 'http://svc:8052', token: 't', ...flags, labels }, env, host);
  if (!r.ok) throw new Error(r.error);
  return r.options;
};
const bad = (flags: Record<string, string | undefined>, labels: string[] = [], env: Record<string, string> = {}) => {
  const r = workerOptions({ labels, ...flags } as never, env, host);
  assert.not.ok(r.ok, JSON.stringify(flags));
  return r.ok ? '' : r.error;
};

F('defaults of INTERFACE.md, the environment, and every flag', () => {
  const o = ok({});
  assert.equal({ ...o, token: undefined }, {
    server: 'http://svc:8052', token: undefined, name: 'box-1', slots: 6, roles: ['backend', 'qa', 'security', 'frontend'], labels: {}, adapter: null, model: null,
    pollMs: 10_000, heartbeatMs: 15_000, workdir: '/work/repo', graceMs: 300_000,
  });
  const e = workerOptions({ labels: [] }, { SERVICE_SERVER_URL: 'https://c.example/', SERVICE_AUTH_TOKEN: 'secret' }, host);
  assert.ok(e.ok && e.options.server === 'https://c.example' && e.options.token === 'secret');
  const all = ok({ name: 'n', slots: '2', roles: 'qa, backend,qa', adapter: 'claude', model: 'm', 'poll-interval': '3', 'heartbeat-interval-ms': '500', workdir: '/w', 'grace-period': '0' }, ['gpu=a100', 'zone=eu']);
  assert.equal([all.name, all.slots, all.roles, all.labels, all.adapter, all.model, all.pollMs, all.heartbeatMs, all.workdir, all.graceMs],
    ['n', 2, ['qa', 'backend'], { gpu: 'a100', zone: 'eu' }, 'claude', 'm', 3000, 500, '/w', 0]);
  assert.is(ok({ 'poll-interval': '3', 'poll-interval-ms': '250' }).pollMs, 250, '--poll-interval-ms wins');
  assert.is(ok({ token: 'flag' }, [], { SERVICE_AUTH_TOKEN: 'env' }).token, 'flag', 'a flag beats the environment');
});

F('usage errors name the flag', () => {
  assert.match(bad({ token: 't' }), '--server URL is required');
  assert.match(bad({ server: 'ftp://x', token: 't' }), '--server must be an http(s) URL');
  assert.match(bad({ server: 'http://x' }), '--token is required');
  for (const [flag, value] of [['slots', '0'], ['slots', 'six'], ['slots', '-1'], ['poll-interval', '0'], ['poll-interval-ms', '1.5'], ['heartbeat-interval-ms', 'x'], ['grace-period', '-5']]) {
    assert.match(bad({ server: 'http://x', token: 't', [flag!]: value }), `--${flag}`);
  }
  assert.match(bad({ server: 'http://x', token: 't', roles: ' , ' }), '--roles needs at least one role');
  assert.match(bad({ server: 'http://x', token: 't', roles: 'Back End' }), "'Back End' is not a role name");
  assert.match(bad({ server: 'http://x', token: 't' }, ['novalue']), "--label 'novalue': expected key=value");
  assert.match(bad({ server: 'http://x', token: 't' }, ['a=1', 'a=2']), "'a' is given twice");
  assert.match(bad({ server: 'http://x', token: 't', name: '  ' }), '--name must not be empty');
});

F('--label is repeatable on the command line', () => {
  assert.equal(labelsOf(['--label', 'a=1', '--slots', '2', '--label=b=2', '--', '--label', 'c=3']), ['a=1', 'b=2']);
});

F('a report\'s fate: delivered, retried (no answer, 5xx, 429), re-registered (401), final (409 fenced, 404, 4xx)', () => {
  assert.is(outcomeOf({ status: 200 }), 'delivered');
  for (const s of [0, 500, 502, 503, 429]) assert.is(outcomeOf({ status: s }), 'retry', String(s));
  assert.is(outcomeOf({ status: 401 }), 'reauth');
  assert.is(outcomeOf({ status: 409 }), 'fenced');
  assert.is(outcomeOf({ status: 404 }), 'gone');
  for (const s of [400, 403, 422]) assert.is(outcomeOf({ status: s }), 'rejected', String(s));
});

F('a heartbeat: 404 (evicted) and 401 register again; no answer is retried; the version must match', () => {
  assert.is(afterHeartbeat({ status: 200 }), 'ok');
  assert.is(afterHeartbeat({ status: 404 }), 'register');
  assert.is(afterHeartbeat({ status: 401 }), 'register');
  assert.is(afterHeartbeat({ status: 0 }), 'retry');
  assert.is(afterHeartbeat({ status: 503 }), 'retry');
  assert.is(afterHeartbeat({ status: 403 }), 'refused');
  assert.is(versionProblem({ version: '1.2.3' }, '1.2.3'), null);
  assert.match(versionProblem({ version: '1.2.4' }, '1.2.3')!, 'the server runs svc 1.2.4 and this worker svc 1.2.3');
  assert.match(versionProblem('<html>', '1.2.3')!, 'did not say its version');
  const body = registration(ok({ slots: '3' }), 1) as { url: string; capacity: { available_slots: number; max_agents: number } };
  assert.equal([body.url, body.capacity.max_agents, body.capacity.available_slots], ['worker:box-1', 3, 2]);
});

F('a session\'s end: the agent\'s own report, else the orchestrator\'s rules for an exit', () => {
  const s: WorkerSession = {
    session_id: 'backend-1a2b3c4d', task_id: 't1', task_title: 'x', tenant: 'default', role: 'backend', claim_count: 1, max_retries: 2,
    status: 'exited', pid: 10, exit_code: 1, started_at: '', worktree: '', branch: 'agent/backend-1a2b3c4d', relay_token: 'r', report: null,
  };
  const at = '2026-01-01T00:00:00.000Z';
  assert.equal(endReport({ ...s, report: { op: 'complete', body: { result_summary: 'ok' } } }, at), { session_id: s.session_id, task_id: 't1', created_at: at, op: 'complete', body: { result_summary: 'ok' }, push: true });
  assert.is(endReport({ ...s, report: { op: 'fail', body: { reason: 'no' } } }, at)!.op, 'fail');
  assert.equal(endReport(s, at)!.op, 'release', 'a crash is retried while claims last');
  const exhausted = endReport({ ...s, claim_count: 3 }, at)!;
  assert.equal([exhausted.op, /retries exhausted/.test(String(exhausted.body.reason))], ['fail', true]);
  assert.match(String(endReport({ ...s, exit_code: 0 }, at)!.body.reason), 'exited without reporting completion');
  assert.equal(endReport({ ...s, status: 'starting', pid: null, exit_code: null }, at)!.body, { reason: 'agent did not start' }, 'INTERFACE Errors rule 6');
  assert.is(endReport({ ...s, status: 'running' }, at), null, 'still running');
  const killed = endReport({ ...s, status: 'killed', exit_code: null, killed_by: 'admin' }, at)!;
  assert.equal([killed.op, killed.body, killed.push], ['block', { reason: 'killed by admin' }, false], 'a kill blocks the task as the local orchestrator does');
  assert.is(endReport(claimingRecord('backend-1a2b3c4d', 'backend', at, '/w'), at), null, 'a claim without an answer reports nothing');
});

F('a claim saved before its request and then without an answer: the server\'s record of the session decides', () => {
  const sid = 'backend-0badc0de';
  const mine = { id: 't9', title: 'x', description: '', role: 'backend', model: null, metadata: {}, tenant: 'default', claim_count: 1, max_retries: 2, status: 'claimed', claimed_by_session: sid, node_id: 'n1' };
  const listed = (...tasks: object[]) => ({ status: 200, body: tasks });
  assert.equal(claimingFate(listed(mine), sid, 'n1', false), { kind: 'run', task: mine }, 'claimed for it: its agent runs');
  assert.equal(claimingFate(listed(mine), sid, 'n1', true), { kind: 'release', task: mine }, 'claimed, but the worker stops: given back');
  assert.is(claimingFate(listed({ ...mine, status: 'in_progress' }), sid, 'n1', false).kind, 'release', 'started by nobody here: given back');
  assert.is(claimingFate(listed(), sid, 'n1', false).kind, 'drop', 'no task for the session: the claim never happened');
  assert.is(claimingFate(listed({ ...mine, node_id: 'n2' }), sid, 'n1', false).kind, 'drop', 'stolen by another node: not ours');
  assert.is(claimingFate(listed({ ...mine, status: 'open', claimed_by_session: null }), sid, 'n1', false).kind, 'drop');
  for (const status of [0, 500, 503, 429, 401]) assert.is(claimingFate({ status, body: null }, sid, 'n1', false).kind, 'wait', String(status));
});

F('the fused call\'s next task: none without an answer is unknown; kill requests from a heartbeat; long poll and role turns', () => {
  const next = { id: 't2', title: 'y', status: 'claimed' };
  assert.equal(nextOf({ status: 200, body: { completed: { id: 't1' }, next } }), next);
  assert.is(nextOf({ status: 200, body: { completed: { id: 't1' }, next: null } }), null);
  for (const status of [409, 404, 422, 429]) assert.is(nextOf({ status, body: { detail: 'no' } }), null, `${status}: nothing was claimed`);
  for (const status of [0, 500, 502]) assert.is(nextOf({ status, body: null }), 'unknown', String(status));
  assert.equal(killsOf({ id: 'n1', kill_sessions: [{ session_id: 's1', requested_by: 'admin' }, { session_id: 7 }, null] }), [{ session_id: 's1', requested_by: 'admin' }]);
  assert.equal([killsOf({ id: 'n1' }), killsOf(null)], [[], []]);
  assert.equal([stateHeadOf({ state_head: 'abc' }), stateHeadOf({ state_head: null }), stateHeadOf({ id: 'n1' }), stateHeadOf({ state_head: 7 }), stateHeadOf(null)], ['abc', null, undefined, undefined, undefined], 'the state commit a heartbeat names; not said: mirror every poll');
  assert.equal([waitSeconds(10_000), waitSeconds(150), waitSeconds(600_000)], [10, 0.15, 60], 'the poll interval, at most 60 s');
  assert.equal([rotate(['a', 'b', 'c'], 0), rotate(['a', 'b', 'c'], 4), rotate([], 3)], [['a', 'b', 'c'], ['b', 'c', 'a'], []]);
});

F.run();
