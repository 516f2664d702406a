// `/repo.git` with stock git and a real node token: a node clones the base branch only, pushes the
// branch of a session it holds, and every other push is rejected the way git shows rejections.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { SECRET, call } from '../cluster/support.ts';

const T = suite('/repo.git');
const run = promisify(execFile);
let repo: TempRepo;
let tmp: { dir: string; cleanup(): void };
let s: RunningServer;
let node = { id: '', token: '' };
let other = { id: '', token: '' };

const git = async (cwd: string, args: string[], token?: string) => {
  const auth = token ? ['-c', `http.extraHeader=Authorization: Bearer ${token}`] : [];
  try {
    const r = await run('git', ['-c', 'credential.helper=', '-c', 'user.name=w', '-c', 'user.email=w@x', ...auth, ...args], { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false' } });
    return { code: 0, out: r.stdout.trim(), err: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: (e.stdout ?? '').trim(), err: e.stderr ?? '' };
  }
};
const register = async (name: string) => {
  const r = await call(s, 'POST', '/cluster/nodes', SECRET, { name, url: '' });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return { id: r.body.id as string, token: r.body.auth_token as string };
};
const claim = async (token: string, sid: string) => {
  const r = await call(s, 'GET', `/tasks/next/backend?claimed_by_session=${sid}`, token);
  assert.is(r.status, 200, JSON.stringify(r.body));
  return r.body as { id: string; node_id: string };
};

T.before(async () => {
  repo = makeRepo('svc-repogit-');
  repo.git('checkout', '-q', '-b', 'secret-feature');
  repo.git('commit', '-q', '--allow-empty', '-m', 'secret work');
  repo.git('checkout', '-q', 'main');
  tmp = makeTempDir('svc-repogit-nodes-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'], env: { SERVICE_CLUSTER_SECRET: SECRET } });
  node = await register('node-a');
  other = await register('node-b');
  for (const title of ['one', 'two']) assert.is((await s.api('POST', '/tasks', { title, role: 'backend' })).status, 201);
});
T.after(async () => {
  await s?.stop();
  repo?.cleanup();
  tmp?.cleanup();
});

T('a node clones the base branch and nothing else; without a node token or the secret: 401/403', async () => {
  const dir = join(tmp.dir, 'clone-a');
  const c = await git(tmp.dir, ['clone', '-q', `${s.url}/repo.git`, dir], node.token);
  assert.is(c.code, 0, c.err);
  assert.is((await git(dir, ['rev-parse', 'HEAD'])).out, repo.git('rev-parse', 'main'));
  assert.is((await git(dir, ['for-each-ref', '--format=%(refname)', 'refs/remotes'])).out.split('\n').filter((r) => !r.endsWith('/HEAD')).join(','), 'refs/remotes/origin/main');
  assert.is((await git(tmp.dir, ['ls-remote', `${s.url}/repo.git`], SECRET)).code, 0, 'the cluster secret fetches too');
  assert.not.ok((await git(tmp.dir, ['ls-remote', `${s.url}/repo.git`], SECRET)).out.includes('secret-feature'));
  assert.is((await git(tmp.dir, ['ls-remote', `${s.url}/repo.git`])).code, 128);
});

T('a node pushes agent/<sid> of the task it holds; main, another session, a delete and other nodes are rejected', async () => {
  const dir = join(tmp.dir, 'clone-a');
  const sid = 'backend-1a2b3c4d';
  const task = await claim(node.token, sid);
  assert.is(task.node_id, node.id);
  await git(dir, ['checkout', '-q', '-b', `agent/${sid}`]);
  await git(dir, ['commit', '-q', '--allow-empty', '-m', 'agent work']);
  const head = (await git(dir, ['rev-parse', 'HEAD'])).out;

  const ok = await git(dir, ['push', `${s.url}/repo.git`, `agent/${sid}`], node.token);
  assert.is(ok.code, 0, ok.err);
  assert.is(repo.git('rev-parse', `refs/heads/agent/${sid}`), head, 'the branch reached the server');

  const main = await git(dir, ['push', `${s.url}/repo.git`, `HEAD:refs/heads/main`], node.token);
  assert.is.not(main.code, 0);
  assert.match(main.err, /\[remote rejected\] HEAD -> main \(only refs\/heads\/agent\/<session>/);
  assert.is.not(repo.git('rev-parse', 'main'), head);

  const foreign = await git(dir, ['push', `${s.url}/repo.git`, `HEAD:refs/heads/agent/backend-99999999`], node.token);
  assert.match(foreign.err, /remote rejected.*session backend-99999999 is not held by this node/);
  await git(dir, ['commit', '-q', '--allow-empty', '-m', 'more work']);
  const both = await git(dir, ['push', `${s.url}/repo.git`, `agent/${sid}`, 'HEAD:refs/tags/v9'], node.token);
  assert.match(both.err, /another ref of this push was refused/);
  assert.is(repo.git('rev-parse', `refs/heads/agent/${sid}`), head, 'all or nothing');
  const del = await git(dir, ['push', `${s.url}/repo.git`, `:agent/${sid}`], node.token);
  assert.match(del.err, /remote rejected.*deleting an agent branch is refused/);
  assert.is(repo.git('rev-parse', `refs/heads/agent/${sid}`), head, 'still there');

  await git(dir, ['reset', '-q', '--hard', head]);
  await git(dir, ['commit', '-q', '--allow-empty', '-m', 'other work']);
  const byOther = await git(dir, ['push', `${s.url}/repo.git`, `agent/${sid}:agent/${sid}`], other.token);
  assert.match(byOther.err, /not held by this node/);
  const byAdmin = await git(dir, ['push', `${s.url}/repo.git`, `agent/${sid}`], s.token);
  assert.is.not(byAdmin.code, 0, 'only nodes push');

  // The task given back: the session is no longer the node's.
  assert.is((await call(s, 'POST', `/tasks/${task.id}/release`, node.token, {})).status, 200);
  const late = await git(dir, ['push', `${s.url}/repo.git`, `agent/${sid}`], node.token);
  assert.match(late.err, /not held by this node/);
  assert.is(repo.git('rev-parse', `refs/heads/agent/${sid}`), head);
});

T.run();
