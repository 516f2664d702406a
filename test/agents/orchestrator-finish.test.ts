import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listTokens } from '../../src/auth/index.ts';
import { sessionLog, sleep, startAgents, type AgentsHarness } from './harness.ts';

const T = suite('orchestrator: gates, merge, partial merge, stalls');
let h: AgentsHarness;
T.after.each(async () => { await h?.close(); });

const refs = (prefix: string) => h.repo.git('for-each-ref', '--format=%(refname)', prefix).split('\n').filter(Boolean);
const waitLog = async (sid: string, re: RegExp) => {
  for (let i = 0; i < 400 && !re.test(sessionLog(h.layout, sid)); i++) await sleep(25);
  assert.match(sessionLog(h.layout, sid), re);
};

T('passing gates: the branch is merged into main, the task closed, the report stored, nothing left behind', async () => {
  h = await startAgents({ config: (c) => { c.gates = [{ name: 'committed', command: 'git log -1 --format=%s | grep -q "fake agent"', required: true, timeout_s: 30 }]; } });
  const t = await h.create('write a file');
  await h.until(() => h.task(t.id).status === 'closed', 15_000, 'closed');
  assert.is(h.repo.git('show', `main:${t.id}.txt`), `work of task ${t.id}`);
  assert.match(h.repo.git('log', '-1', '--format=%s', 'main'), /^Merge agent\/backend-[0-9a-f]{8}: write a file/);
  const report = JSON.parse(readFileSync(h.layout.gates(t.id), 'utf8'));
  assert.is(report.overall_pass, true);
  assert.is(report.results[0].status, 'pass');
  assert.equal(refs('refs/heads/agent/'), [], 'merged branch deleted');
  assert.equal(refs('refs/sdd/graveyard/'), [], 'nothing unmerged');
  assert.is(h.repo.git('worktree', 'list').split('\n').length, 1);
  const runs = await h.store.readJsonl<{ outcome: string; gates_passed: boolean }>(h.layout.metricsRuns);
  assert.equal(runs.map((r) => [r.outcome, r.gates_passed]), [['succeeded', true]]);
  const tokens = (await listTokens(h.layout)).filter((x) => x.task_id === t.id);
  assert.is(tokens.length, 1, 'one task-scoped agent token was issued');
  assert.is(tokens[0]!.role, 'agent');
  assert.type(tokens[0]!.revoked_at, 'string', 'and revoked when the session ended');
  const cmp = await h.api('GET', '/agents/comparison');
  assert.equal(cmp.body, [{ adapter: 'generic', model: '', tasks: 1, succeeded: 1, failed: 0, success_rate: 1, avg_completion_s: cmp.body[0].avg_completion_s, cost_per_task_usd: null, gate_pass_rate: 1 }]);
});

T('a failing required gate reopens the task (janitor), then fails it with gate_failed; every commit is kept', async () => {
  h = await startAgents({ config: (c) => { c.gates = [{ name: 'needs-file', command: 'test -f must-exist.txt', required: true, timeout_s: 30 }]; c.janitor.max_reopens = 1; } });
  const t = await h.create('never passes');
  await h.until(() => h.task(t.id).status === 'failed', 20_000, 'failed');
  const done = h.task(t.id);
  assert.is(done.failure?.type, 'gate_failed');
  assert.match(done.failure!.reason, /needs-file/);
  assert.is(done.claim_count, 2, 'reopened once, ran twice');
  assert.ok(Number(done.metadata.janitor_reopen_count) >= 1);
  assert.is(JSON.parse(readFileSync(h.layout.gates(t.id), 'utf8')).overall_pass, false);
  assert.is(refs('refs/sdd/graveyard/').length, 2, 'both runs\' commits kept');
  assert.is(h.repo.git('rev-list', '--count', 'main'), '1', 'nothing merged');
});

T('a dirty base checkout defers the merge without touching the user\'s files; it merges once the user commits', async () => {
  h = await startAgents();
  const readme = join(h.repo.dir, 'README.md');
  const dirty = Buffer.from('# user edit in progress\n\u00e9\r\nno newline at end');
  writeFileSync(readme, dirty);
  const t = await h.create('merge later');
  await h.until(() => h.task(t.id).status === 'done' && typeof h.task(t.id).metadata.merge_deferred === 'string', 15_000, 'deferred');
  await h.step();
  assert.is(h.task(t.id).status, 'done');
  assert.match(String(h.task(t.id).metadata.merge_deferred), /uncommitted changes/);
  assert.ok(readFileSync(readme).equals(dirty), 'user file byte for byte');
  assert.is(h.repo.git('rev-list', '--count', 'main'), '1');
  h.repo.git('commit', '-q', '-am', 'user work');
  await h.until(() => h.task(t.id).status === 'closed', 10_000, 'closed');
  assert.ok(readFileSync(readme).equals(dirty));
  assert.is(h.repo.git('show', `main:${t.id}.txt`), `work of task ${t.id}`);
  assert.is(h.task(t.id).metadata.merge_deferred, undefined);
});

T('a merge conflict blocks the task for a human and keeps the agent\'s work in the graveyard', async () => {
  h = await startAgents();
  const t = await h.create('edit readme', ['edit file=README.md content=agent version', 'commit message=agent readme', 'complete']);
  await h.step();
  writeFileSync(join(h.repo.dir, 'README.md'), 'user version\n');
  h.repo.git('commit', '-q', '-am', 'user readme');
  await h.until(() => h.task(t.id).status === 'blocked', 15_000, 'blocked');
  assert.is(readFileSync(join(h.repo.dir, 'README.md'), 'utf8'), 'user version\n');
  const [ref] = refs('refs/sdd/graveyard/');
  assert.ok(ref);
  assert.is(h.repo.git('show', `${ref}:README.md`), 'agent version');
  assert.is(h.task(t.id).status_reason, `merge conflict: README.md; the work is kept in ${ref}: merge it into main yourself, then run 'svc task close ${t.id} --merged'`);
  // Other verbs say what a blocked task allows; a person merges by hand, then closes it with merged.
  const done = await h.api('POST', `/tasks/${t.id}/complete`, { result_summary: 'by hand' });
  assert.equal([done.status, done.body.detail], [409, `Cannot complete task '${t.id}' in state 'blocked' (allowed: unblock, fail, cancel, close (merged: true))`]);
  assert.is((await h.api('POST', `/tasks/${t.id}/close`)).status, 409, 'a plain close does not close a blocked task');
  h.repo.git('merge', '-q', '-X', 'theirs', '-m', 'merged by hand', ref!);
  const closed = await h.api('POST', `/tasks/${t.id}/close`, { merged: true, reason: 'merged by hand in abc123' });
  assert.equal([closed.status, closed.body.status, closed.body.status_reason], [200, 'closed', 'merged by hand in abc123']);
});

T('partial merge takes only committed files of the running session into main', async () => {
  h = await startAgents();
  const t = await h.create('partial', ['edit file=a.txt content=A', 'edit file=c.txt content=C', 'commit message=a', 'edit file=b.txt content=B', 'log text=ready', 'hang']);
  await h.step();
  const [s] = h.orch.sessions();
  await waitLog(s!.session_id, /ready 1/);
  const r = await h.api('POST', `/tasks/${t.id}/partial-merge`, { files: ['a.txt', 'b.txt'] });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.task_id, r.body.session_id, r.body.merged_files, r.body.uncommitted_files, r.body.skipped_already_merged], [t.id, s!.session_id, ['a.txt'], ['b.txt'], []]);
  assert.match(r.body.commit_sha, /^[0-9a-f]{40}$/);
  assert.is(h.repo.git('show', 'main:a.txt'), 'A');
  assert.is(h.repo.git('ls-tree', '--name-only', 'main', 'b.txt'), '', 'uncommitted file not merged');
  assert.is(readFileSync(join(h.repo.dir, 'a.txt'), 'utf8'), 'A', 'user checkout follows');
  const again = await h.api('POST', `/tasks/${t.id}/partial-merge`, { files: ['a.txt'] });
  assert.equal(again.body.skipped_already_merged, ['a.txt']);
  const state = await h.api('GET', `/tasks/${t.id}/partial-merge`);
  assert.equal([state.status, state.body.merged_files], [200, ['a.txt']]);
  const open = await h.create('not started');
  assert.is((await h.api('POST', `/tasks/${open.id}/partial-merge`, { files: ['a.txt'] })).status, 409);
  assert.is((await h.api('POST', `/tasks/${t.id}/partial-merge`, { files: ['../x'] })).status, 422);
  // A task whose claim names someone else's session (a client chooses claimed_by_session) merges nothing of it.
  for (const claimer of [s!.session_id, 'nobody-00000000', 'x..y']) {
    const other = await h.create(`claims ${claimer}`);
    const c = await h.api('POST', `/tasks/${other.id}/claim?claimed_by_session=${encodeURIComponent(claimer)}`);
    assert.is(c.status, 200, JSON.stringify(c.body));
    assert.is((await h.api('POST', `/tasks/${other.id}/progress`, { message: 'working' })).status, 200);
    const stolen = await h.api('POST', `/tasks/${other.id}/partial-merge`, { files: ['c.txt'] });
    assert.is(stolen.status, 409, JSON.stringify(stolen.body));
    assert.match(stolen.body.detail, /not by a session svc started for it/);
    assert.is((await h.api('GET', `/tasks/${other.id}/partial-merge`)).status, 404);
  }
  assert.is(h.repo.git('ls-tree', '--name-only', 'main', 'c.txt'), '', 'nothing of the session merged through another task');
});

T('a session whose progress snapshots stop changing is marked stalled, logged, and left running', async () => {
  h = await startAgents({ config: (c) => { c.orchestrator.stall_snapshots = 3; } });
  const same = 'progress files_changed=2 tests_passing=5 errors=0';
  await h.create('stuck', [same, same, same, 'log text=stuck', 'hang']);
  await h.step();
  const sid = h.orch.sessions()[0]!.session_id;
  await waitLog(sid, /stuck 1/);
  await h.step();
  const s = h.orch.sessions()[0]!;
  assert.is(s.stalled, true);
  assert.is(s.status, 'running');
  const list = await h.api('GET', '/agents');
  assert.is(list.body[0].stalled, true);
  assert.is(JSON.parse(readFileSync(h.layout.agent(sid), 'utf8')).stalled, true);
});

T.run();
