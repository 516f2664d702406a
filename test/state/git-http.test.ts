import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

// `/state.git` with stock git: the board's history, and nothing of the user's code.
const T = suite('/state.git smart HTTP');
const run = promisify(execFile);
let repo: TempRepo;
let tmp: { dir: string; cleanup(): void };
let s: RunningServer;
let codeSha: string;
let secretBlob: string;

// Stock git as a teammate runs it: no prompts, no credential helper, the token as a header.
const git = async (cwd: string, args: string[], token?: string, extra: string[] = []) => {
  const auth = token ? ['-c', `http.extraHeader=Authorization: Bearer ${token}`] : [];
  try {
    const r = await run('git', ['-c', 'credential.helper=', ...auth, ...extra, ...args], { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false' }, maxBuffer: 64 << 20 });
    return { code: 0, out: r.stdout.trim(), err: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: (e.stdout ?? '').trim(), err: e.stderr ?? '' };
  }
};
const fresh = async (name: string) => {
  const dir = join(tmp.dir, name);
  await run('git', ['init', '-q', dir]);
  return dir;
};

T.before(async () => {
  repo = makeRepo('svc-stategit-');
  tmp = makeTempDir('svc-stategit-clients-');
  // Code the board must never leak: a secret file on a branch, a tag, and the commit ids.
  repo.git('checkout', '-q', '-b', 'feature');
  repo.git('commit', '-q', '--allow-empty', '-m', 'secret work');
  codeSha = repo.git('rev-parse', 'HEAD');
  secretBlob = repo.git('rev-parse', 'HEAD:README.md');
  repo.git('tag', 'v1');
  repo.git('checkout', '-q', 'main');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  for (const title of ['Add a health check', 'Fix login']) assert.is((await s.api('POST', '/tasks', { title })).status, 201);
  await s.settled();
});
T.after(async () => {
  await s?.stop();
  repo?.cleanup();
  tmp?.cleanup();
});

T('git fetch with a token brings refs/sdd/state (protocol v2 and v0); without one it fails with 401', async () => {
  for (const version of ['2', '0']) {
    const dir = await fresh(`fetch-v${version}`);
    const ok = await git(dir, ['fetch', '-q', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token, ['-c', `protocol.version=${version}`]);
    assert.is(ok.code, 0, ok.err);
    assert.is((await git(dir, ['rev-parse', 'refs/sdd/state'])).out, repo.git('rev-parse', 'refs/sdd/state'));
    assert.match((await git(dir, ['log', '--format=%B', 'refs/sdd/state'])).out, 'create "Fix login"');
    assert.is((await git(dir, ['fsck', '--strict', '--no-dangling'])).code, 0);
  }
  const dir = await fresh('no-token');
  const denied = await git(dir, ['fetch', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state']);
  assert.is.not(denied.code, 0);
  assert.match(denied.err, /401|Authentication failed|could not read Username/);
  const raw = await fetch(`${s.url}/state.git/info/refs?service=git-upload-pack`);
  assert.is(raw.status, 401);
  assert.is((await fetch(`${s.url}/state.git/info/refs?service=git-upload-pack`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
});

T('git ls-remote shows exactly refs/sdd/state; a code branch, a tag or a code commit id cannot be fetched', async () => {
  for (const version of ['2', '0']) {
    const ls = await git(tmp.dir, ['ls-remote', `${s.url}/state.git`], s.token, ['-c', `protocol.version=${version}`]);
    assert.is(ls.code, 0, ls.err);
    assert.equal(ls.out.split('\n').map((l) => l.split('\t')[1]), ['refs/sdd/state'], ls.out);
  }
  const dir = await fresh('steal');
  for (const version of ['2', '0']) {
    for (const want of ['refs/heads/main', 'refs/heads/feature', 'refs/tags/v1', codeSha, secretBlob]) {
      const r = await git(dir, ['fetch', `${s.url}/state.git`, want], s.token, ['-c', `protocol.version=${version}`]);
      assert.is.not(r.code, 0, `v${version} fetch of ${want} must fail`);
    }
  }
  assert.is.not((await git(dir, ['cat-file', '-e', codeSha])).code, 0, 'no code commit reached the client');
  // The repository /state.git serves from holds the state history and nothing else.
  const mirror = join(repo.dir, '.git', 'svc-state.git');
  assert.is((await git(mirror, ['for-each-ref', '--format=%(refname)'])).out, 'refs/sdd/state');
  for (const oid of [codeSha, secretBlob]) assert.is.not((await git(mirror, ['cat-file', '-e', oid])).code, 0, `${oid} is not in the mirror`);
});

T('a negotiation with many haves (a gzip request body, protocol v0) still fetches', async () => {
  const dir = await fresh('haves');
  await git(dir, ['fetch', '-q', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token);
  // 80 commits of the client's own that the server does not have: each is a `have` line.
  let tip = '';
  for (let i = 0; i < 80; i++) tip = (await git(dir, ['commit-tree', '4b825dc642cb6eb9a060e54bf8d69288fbee4904', ...(tip ? ['-p', tip] : []), '-m', `local ${i}`], undefined, ['-c', 'user.name=a', '-c', 'user.email=a@b'])).out;
  await git(dir, ['update-ref', 'refs/heads/local', tip]);
  const old = (await git(dir, ['rev-parse', 'refs/sdd/state'])).out;
  assert.is((await s.api('POST', '/tasks', { title: 'After the haves' })).status, 201);
  await s.settled();
  const r = await git(dir, ['fetch', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token, ['-c', 'protocol.version=0']);
  assert.is(r.code, 0, r.err);
  assert.is((await git(dir, ['rev-parse', 'refs/sdd/state~1'])).out, old);
});

T('git clone --bare and --mirror work; the mirror holds the board', async () => {
  const bare = await git(tmp.dir, ['clone', '-q', '--bare', `${s.url}/state.git`, join(tmp.dir, 'bare.git')], s.token);
  assert.is(bare.code, 0, bare.err);
  const mirror = await git(tmp.dir, ['clone', '-q', '--mirror', `${s.url}/state.git`, join(tmp.dir, 'mirror.git')], s.token);
  assert.is(mirror.code, 0, mirror.err);
  assert.is((await git(join(tmp.dir, 'mirror.git'), ['rev-parse', 'refs/sdd/state'])).out, repo.git('rev-parse', 'refs/sdd/state'));
});

T('an incremental fetch brings only the new commits; push answers 403', async () => {
  const dir = await fresh('incremental');
  assert.is((await git(dir, ['fetch', '-q', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token)).code, 0);
  const before = (await git(dir, ['rev-parse', 'refs/sdd/state'])).out;
  assert.is((await s.api('POST', '/tasks', { title: 'Later change' })).status, 201);
  await s.settled();
  const r = await git(dir, ['fetch', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token);
  assert.is(r.code, 0, r.err);
  assert.is((await git(dir, ['rev-parse', 'refs/sdd/state~1'])).out, before, 'one new commit on top');
  assert.match((await git(dir, ['log', '-1', '--format=%s', 'refs/sdd/state'])).out, 'create "Later change"');
  const push = await git(dir, ['push', `${s.url}/state.git`, 'refs/sdd/state:refs/sdd/state'], s.token);
  assert.is.not(push.code, 0);
  assert.match(push.err, /403/);
  const post = await fetch(`${s.url}/state.git/git-receive-pack`, { method: 'POST', headers: { authorization: `Bearer ${s.token}` } });
  assert.is(post.status, 403);
  assert.match(((await post.json()) as { detail: string }).detail, /read-only/);
});

T.run();
