// Work a cluster node finished: the server gates and merges its pushed branch like a local agent's, and
// blocks a task whose branch never came.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { remoteAction } from '../../src/agents/index.ts';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { SECRET, call } from '../cluster/support.ts';

const T = suite('remote sessions');
const run = promisify(execFile);
let repo: TempRepo;
let tmp: { dir: string; cleanup(): void };
let s: RunningServer;
let node = { id: '', token: '' };

const git = (cwd: string, args: string[], token?: string) =>
  run('git', ['-c', 'credential.helper=', '-c', 'user.name=w', '-c', 'user.email=w@x', ...(token ? ['-c', `http.extraHeader=Authorization: Bearer ${token}`] : []), ...args], { cwd }).then((r) => r.stdout.trim());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; ;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${s.output().slice(-2000)}`);
    await sleep(100);
  }
}

T('the decision (pure): only done tasks of nodes with an unknown session; look for the branch, then adopt or block', () => {
  const t = { status: 'done' as const, node_id: 'abcdef012345', claimed_by_session: 'backend-1a2b3c4d' };
  assert.is(remoteAction(t, () => false, null), 'look');
  assert.is(remoteAction(t, () => false, true), 'adopt');
  assert.is(remoteAction(t, () => false, false), 'block');
  assert.is(remoteAction(t, () => true, true), 'skip', 'a session already here');
  assert.is(remoteAction({ ...t, node_id: null }, () => false, true), 'skip', 'a local agent');
  assert.is(remoteAction({ ...t, status: 'in_progress' as never }, () => false, true), 'skip');
  assert.is(remoteAction({ ...t, claimed_by_session: '../x' }, () => false, true), 'skip');
});

T.before(async () => {
  repo = makeRepo('svc-remote-');
  // A gate that runs in the adopted worktree: the node's file must be there.
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), 'gates:\n  - name: has-work\n    command: test -f work.txt\n    required: true\n');
  tmp = makeTempDir('svc-remote-node-');
  s = await startServer(repo.dir, { env: { SERVICE_CLUSTER_SECRET: SECRET } });
  const r = await call(s, 'POST', '/cluster/nodes', SECRET, { name: 'node-a', url: '' });
  node = { id: r.body.id, token: r.body.auth_token };
});
T.after(async () => {
  await s?.stop();
  repo?.cleanup();
  tmp?.cleanup();
});

T('a pushed branch is gated and merged into the base, the task closed, the branch and worktree gone', async () => {
  const task = (await s.api('POST', '/tasks', { title: 'remote work', role: 'backend' })).body;
  const dep = (await s.api('POST', '/tasks', { title: 'after it', role: 'backend', depends_on: [task.id] })).body;
  const sid = 'backend-0a0b0c0d';
  const claimed = await call(s, 'GET', `/tasks/next/backend?claimed_by_session=${sid}`, node.token);
  assert.is(claimed.body.id, task.id);
  assert.is(claimed.body.branch, `agent/${sid}`, 'dependents wait for the merge');
  const dir = join(tmp.dir, 'a');
  await git(tmp.dir, ['clone', '-q', `${s.url}/repo.git`, dir], node.token);
  await git(dir, ['checkout', '-q', '-b', `agent/${sid}`]);
  writeFileSync(join(dir, 'work.txt'), 'from the node\n');
  await git(dir, ['add', 'work.txt']);
  await git(dir, ['commit', '-q', '-m', 'node work']);
  await git(dir, ['push', '-q', `${s.url}/repo.git`, `agent/${sid}`], node.token);
  assert.is((await call(s, 'POST', `/tasks/${task.id}/complete`, node.token, { result_summary: 'did it' })).status, 200);
  assert.is((await call(s, 'GET', `/tasks/next/backend?claimed_by_session=backend-11111111`, node.token)).status, 404, 'the dependent waits while the work is not merged');
  await until('closed', async () => ((await s.api('GET', `/tasks/${task.id}`)).body.status === 'closed' ? true : undefined));
  assert.is(repo.git('show', 'main:work.txt'), 'from the node');
  const gates = (await s.api('GET', `/tasks/${task.id}/gates`)).body;
  assert.is(gates.overall_pass, true);
  await until('branch and worktree retired', async () => (repo.git('for-each-ref', 'refs/heads/agent/') === '' && repo.git('worktree', 'list').split('\n').length === 1 ? true : undefined));
  assert.is((await call(s, 'GET', `/tasks/next/backend?claimed_by_session=backend-11111111`, node.token)).body.id, dep.id);
});

T('a node that reports completion without pushing: the task is blocked with the reason', async () => {
  const task = (await s.api('POST', '/tasks', { title: 'never pushed', role: 'qa' })).body;
  assert.is((await call(s, 'GET', `/tasks/next/qa?claimed_by_session=qa-22222222`, node.token)).body.id, task.id);
  assert.is((await call(s, 'POST', `/tasks/${task.id}/complete`, node.token, { result_summary: 'did it' })).status, 200);
  const t = await until('blocked', async () => {
    const b = (await s.api('GET', `/tasks/${task.id}`)).body;
    return b.status === 'blocked' ? b : undefined;
  });
  assert.match(t.status_reason ?? JSON.stringify(t), /never reached the server/);
});

T.run();
