import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir } from '../helpers/repo.ts';
import { runCli, startServer } from '../helpers/server.ts';

const up = suite('svc up');

up('refuses a directory that is not a git work tree, naming the path (exit 1)', async () => {
  const tmp = makeTempDir();
  try {
    const r = await runCli(['up', '--port', '0'], { cwd: tmp.dir });
    assert.is(r.code, 1);
    assert.ok(r.stderr.includes(tmp.dir) && r.stderr.includes('not a git work tree'), r.stderr);
  } finally { tmp.cleanup(); }
});

up('refuses a repository without a commit, naming the path (exit 1)', async () => {
  const tmp = makeTempDir();
  execFileSync('git', ['init', '-q'], { cwd: tmp.dir });
  try {
    const r = await runCli(['up', '--port', '0'], { cwd: tmp.dir });
    assert.is(r.code, 1);
    assert.ok(r.stderr.includes(tmp.dir) && r.stderr.includes('no commit'), r.stderr);
  } finally { tmp.cleanup(); }
});

up('unknown flags and bad values are usage errors (exit 2)', async () => {
  const repo = makeRepo();
  try {
    for (const args of [['up', '--bogus'], ['up', '--port', 'abc'], ['up', '--port', '70000'], ['up', '--max-agents', '-1'], ['task', 'list', '--limit', '0']]) {
      const r = await runCli(args, { cwd: repo.dir });
      assert.is(r.code, 2, `${args.join(' ')} → ${r.code}: ${r.stderr}`);
      assert.ok(r.stderr.length > 0);
    }
  } finally { repo.cleanup(); }
});

up('first start creates .sdd from the template, excludes it from git, writes a 0600 admin token, serves /health', async () => {
  const repo = makeRepo();
  const srv = await startServer(repo.dir, { env: { SERVICE_AUTH_TOKEN: '' }, args: ['--no-orchestrator'] });
  try {
    assert.ok(existsSync(join(repo.dir, '.sdd', 'config.yaml')));
    assert.ok(readFileSync(join(repo.dir, '.git', 'info', 'exclude'), 'utf8').includes('/.sdd/'));
    const tokenFile = join(repo.dir, '.sdd', 'secrets', 'admin.token');
    assert.is(statSync(tokenFile).mode & 0o777, 0o600);
    assert.ok(srv.output().includes(tokenFile), 'the log says where the admin token is');
    assert.is((await fetch(`${srv.url}/health`)).status, 200);
    assert.is((await fetch(`${srv.url}/tasks`)).status, 401);
    const token = readFileSync(tokenFile, 'utf8').trim();
    assert.is((await fetch(`${srv.url}/tasks`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.is(repo.git('status', '--porcelain'), '', 'the user sees no new files');
  } finally { await srv.kill(); repo.cleanup(); }
});

up('a SERVICE_AUTH_TOKEN shorter than 32 characters is refused with a message (exit 1); runtime and secrets are 0700', async () => {
  const repo = makeRepo();
  try {
    const r = await runCli(['up', '--port', '0', '--no-orchestrator'], { cwd: repo.dir, env: { SERVICE_AUTH_TOKEN: 'short-token' } });
    assert.is(r.code, 1);
    assert.match(r.stderr, /SERVICE_AUTH_TOKEN is 11 characters long; an admin token needs at least 32/);
    for (const d of ['secrets', 'runtime', 'runtime/logs', 'runtime/prompts']) {
      assert.is(statSync(join(repo.dir, '.sdd', d)).mode & 0o777, 0o700, d);
    }
  } finally { repo.cleanup(); }
});

up('a second server on the same tree is refused with the pid and port of the first (exit 1)', async () => {
  const repo = makeRepo();
  const first = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  try {
    const r = await runCli(['up', '--port', '0'], { cwd: repo.dir });
    assert.is(r.code, 1);
    assert.ok(r.stderr.includes(`pid ${first.pid}`) && r.stderr.includes(`port ${first.port}`), r.stderr);
    assert.is((await fetch(`${first.url}/health`)).status, 200, 'the first one keeps serving');
  } finally { await first.kill(); repo.cleanup(); }
});

up('SIGTERM commits the last change, releases the lock and exits 0; a SIGKILLed holder is replaced at once', async () => {
  const repo = makeRepo();
  let srv = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  try {
    const created = await srv.api('POST', '/tasks', { title: 'survives shutdown' });
    assert.is(created.status, 201);
    assert.is(await srv.stop('SIGTERM'), 0);
    assert.not.ok(existsSync(join(repo.dir, '.sdd', 'runtime', 'server.lock')), 'lock released');
    const tree = repo.git('ls-tree', '-r', '--name-only', 'refs/sdd/state');
    assert.ok(tree.includes(`${created.body.id}.json`), 'the task is in refs/sdd/state after shutdown');
    let t0 = Date.now();
    srv = await startServer(repo.dir, { args: ['--no-orchestrator'] });
    const cleanStartMs = Date.now() - t0;
    await srv.kill();
    t0 = Date.now();
    srv = await startServer(repo.dir, { args: ['--no-orchestrator'] });
    // Waiting out a dead server's locks would add their 10 s stale window; compared with a clean start under the same load.
    const afterKillMs = Date.now() - t0;
    assert.ok(afterKillMs < cleanStartMs + 5000, `no wait for the stale lock of a dead server (${afterKillMs} ms after a SIGKILL, ${cleanStartMs} ms clean)`);
    assert.is((await srv.api('GET', `/tasks/${created.body.id}`)).body.title, 'survives shutdown');
  } finally { await srv.kill(); repo.cleanup(); }
});

up('svc init creates .sdd and never touches the user HEAD, index or files', async () => {
  const repo = makeRepo();
  try {
    writeFileSync(join(repo.dir, 'work.txt'), 'uncommitted\n');
    const head = repo.git('rev-parse', 'HEAD');
    const r = await runCli(['init'], { cwd: repo.dir });
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(join(repo.dir, '.sdd', 'config.yaml')));
    assert.is(repo.git('rev-parse', 'HEAD'), head);
    assert.is(repo.git('status', '--porcelain'), '?? work.txt');
  } finally { repo.cleanup(); }
});

up.run();
