import { existsSync, writeFileSync } from 'node:fs';
import { loadConfigFile } from '../../src/config/index.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isAlive } from '../../src/agents/index.ts';
import { sessionLog, sleep, startAgents, type AgentsHarness } from './harness.ts';

const T = suite('orchestrator: limits, kills, exits');
let h: AgentsHarness;
T.after.each(async () => { await h?.close(); });

const until = async (ok: () => boolean, what: string, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
};
const running = () => h.orch.sessions().filter((s) => s.status === 'running');

T('never more than max_agents run at once, at most batch_size start per tick', async () => {
  h = await startAgents({ config: (c) => { c.orchestrator.max_agents = 2; c.orchestrator.batch_size = 1; } });
  for (let i = 0; i < 4; i++) await h.create(`hang ${i}`, ['hang']);
  await h.step();
  assert.is(running().length, 1, 'one per tick');
  await h.step();
  assert.is(running().length, 2);
  await h.step();
  await h.step();
  assert.is(running().length, 2, 'bounded by max_agents');
  assert.is(h.svc.list({ status: 'open' }).length, 2);
  for (const s of running()) {
    assert.ok(s.pid && isAlive(s.pid), 'a real process');
    assert.match(s.session_id, /^backend-[0-9a-f]{8}$/);
    assert.is(s.branch, `agent/${s.session_id}`);
    assert.ok(existsSync(s.worktree));
    assert.is(h.task(s.task_id).status, 'in_progress');
    assert.is(h.task(s.task_id).claimed_by_session, s.session_id);
  }
});

T('a kill request stops a hanging agent within one tick and blocks its task (killed by <actor>) until someone unblocks it', async () => {
  h = await startAgents();
  const t = await h.create('hangs', ['log lines=2 text=before-hang', 'hang']);
  await h.step();
  const [s] = running();
  assert.ok(s && s.pid);
  for (let i = 0; i < 200 && !/before-hang 2/.test(sessionLog(h.layout, s.session_id)); i++) await sleep(25);
  const r = await h.api('POST', `/agents/${s.session_id}/kill`);
  assert.equal(r, { status: 200, body: { session_id: s.session_id, kill_requested: true } });
  assert.ok(existsSync(h.layout.kill(s.session_id)));
  await h.orch.tick();
  assert.not.ok(isAlive(s.pid), 'process group killed');
  assert.not.ok(existsSync(h.layout.kill(s.session_id)), 'signal consumed');
  const after = h.task(t.id);
  assert.is(after.status, 'blocked', 'the kill stops the work: it is not retried');
  assert.is(after.status_reason, 'killed by env', 'the actor of the admin token from SERVICE_AUTH_TOKEN');
  assert.is(after.retry_count, 0);
  assert.not.ok(h.orch.sessions().some((x) => x.session_id === s.session_id), 'session retired');
  await h.step();
  assert.equal(running(), [], 'nothing dispatched the blocked task again');
  assert.is((await h.api('POST', `/tasks/${t.id}/unblock`, { reason: 'try again' })).body.status, 'open');
  await h.step();
  assert.is(h.task(t.id).status, 'in_progress', 'unblock makes it dispatchable again');
  assert.match(sessionLog(h.layout, s.session_id), /before-hang 2/);
  const runs = await h.store.readJsonl<{ outcome: string }>(h.layout.metricsRuns);
  assert.equal(runs.map((x) => x.outcome), ['killed']);
});

T('bad session ids answer 404 on every session route, never a file-system error', async () => {
  h = await startAgents();
  for (const [m, p] of [['GET', '/agents/..%2F..%2Fetc/logs'], ['POST', '/agents/UPPER/kill'], ['GET', '/agents/a%00b/stream'], ['GET', '/agents/nope-00000000/logs']] as const) {
    const r = await h.api(m, p);
    assert.is(r.status, 404, `${m} ${p}`);
    assert.type(r.body.detail, 'string');
  }
});

T('an agent that crashes is retried, then the task fails with agent_exit', async () => {
  h = await startAgents();
  const t = await h.create('crashes', ['crash code=3'], { max_retries: 1 });
  await h.until(() => h.task(t.id).status === 'failed', 15_000, 'failed');
  const done = h.task(t.id);
  assert.is(done.retry_count, 1);
  assert.is(done.failure?.type, 'agent_exit');
  assert.match(done.failure!.reason, /exited with code 3; retries exhausted/);
  assert.is(done.claim_count, 2, 'ran twice');
  assert.equal(h.orch.sessions(), []);
  const runs = await h.store.readJsonl<{ outcome: string }>(h.layout.metricsRuns);
  assert.equal(runs.map((x) => x.outcome), ['released', 'failed']);
  assert.is(h.repo.git('worktree', 'list').split('\n').length, 1, 'no worktree left');
});

T('an agent that exits 0 without reporting fails its task at once', async () => {
  h = await startAgents();
  const t = await h.create('exits quietly', ['exit0']);
  await h.until(() => h.task(t.id).status === 'failed', 10_000, 'failed');
  assert.equal(h.task(t.id).failure, { type: 'agent_exit', reason: 'exited without reporting completion' });
  assert.is(h.task(t.id).retry_count, 0);
});

T('an agent that cannot be started gives its task back at once (rule 6), without counting a retry', async () => {
  h = await startAgents({ config: (c) => { c.merge.base = 'no-such-branch'; } });
  const t = await h.create('unstartable');
  await h.step();
  const after = h.task(t.id);
  assert.is(after.status, 'open');
  assert.is(after.retry_count, 0);
  assert.match(after.status_reason ?? '', /agent could not be started/);
  await h.step();
  assert.equal(h.orch.sessions().filter((s) => s.task_id === t.id && s.status === 'running'), []);
});

T('with no agent CLI on PATH, tasks stay open and untouched (no claim/release churn)', async () => {
  h = await startAgents({ env: { PATH: '/nonexistent' } });
  const t = await h.create('nobody can run me');
  await h.step();
  await h.step();
  assert.is(h.task(t.id).status, 'open');
  assert.is(h.task(t.id).version, t.version);
  assert.equal(h.orch.sessions(), []);
});

T('with timers on, a .kill file triggers a tick at once and a config.yaml change is reloaded', async () => {
  let file = 'orchestrator:\n  max_agents: 1\n';
  h = await startAgents({
    timers: true,
    config: (c) => { c.orchestrator.tick_ms = 60_000; },
    reloadConfig: (layout) => {
      if (!existsSync(layout.config)) writeFileSync(layout.config, file);
      return loadConfigFile(layout.config);
    },
  });
  writeFileSync(h.layout.config, file);
  await h.create('hang', ['log text=up', 'hang']);
  await until(() => running().length === 1, 'dispatch on the task change');
  const s = running()[0]!;
  for (let i = 0; i < 200 && !/up 1/.test(sessionLog(h.layout, s.session_id)); i++) await sleep(25);
  writeFileSync(h.layout.kill(s.session_id), '{}\n');
  await until(() => !isAlive(s.pid!), 'killed well before tick_ms');
  assert.is(h.config.orchestrator.max_agents, 4, 'the value given at start (like a flag) stays');
  file = 'orchestrator:\n  max_agents: 2\ngates:\n  - name: lint\n    command: "true"\n';
  writeFileSync(h.layout.config, file);
  await until(() => h.config.orchestrator.max_agents === 2 && h.config.gates.length === 1, 'config reloaded');
  assert.is(h.config.gates[0]!.name, 'lint');
});

T.run();
