import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';

// A board synced with plain git: fetch the ref into a clone, start svc there, nothing is lost.
const T = suite('state restore at start');
let src: TempRepo;
let dir: { dir: string; cleanup(): void };
let titles: Map<string, { title: string; version: number }>;
let stopped: RunningServer[] = [];

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }).trim();
const logLines = (s: RunningServer) => s.output().split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l).msg as string; } catch { return l; } });
const board = async (s: RunningServer) => {
  const r = await s.api('GET', '/tasks?limit=500');
  return new Map<string, { title: string; version: number }>((r.body.tasks ?? r.body).map((t: any) => [t.id, { title: t.title, version: t.version }]));
};
const clone = (name: string) => {
  const to = join(dir.dir, name);
  git(dir.dir, 'clone', '-q', src.dir, to);
  git(to, 'config', 'user.email', 't@svc.invalid');
  git(to, 'config', 'user.name', 't');
  return to;
};

T.before(async () => {
  src = makeRepo('svc-sync-src-');
  dir = makeTempDir('svc-sync-');
  const s = await startServer(src.dir, { args: ['--no-orchestrator'] });
  try {
    assert.ok(logLines(s).includes('state: first commit of the board (3 files)') || logLines(s).some((l) => l.startsWith('state: first commit of the board')), logLines(s).join('\n'));
    assert.not.ok(logLines(s).some((l) => /recover/.test(l)), 'a first start says nothing of recovery');
    for (let i = 0; i < 8; i++) {
      const r = await s.api('POST', '/tasks', { title: `Board task ${i}`, role: 'backend' });
      assert.is(r.status, 201);
    }
    const first = (await s.api('GET', '/tasks/next/backend')).body;
    await s.api('POST', `/tasks/${first.id}/claim?claimed_by_session=backend-3f2a`);
    await s.settled();
    titles = await board(s);
  } finally {
    await s.stop();
  }
});
T.after(async () => {
  for (const s of stopped) await s.kill().catch(() => undefined);
  src?.cleanup();
  dir?.cleanup();
});

T('clone + fetch of refs/sdd/state + svc up serves every task with the same versions; the new tip deletes nothing', async () => {
  const to = clone('fetched');
  git(to, 'fetch', '-q', src.dir, 'refs/sdd/state:refs/sdd/state');
  const fetched = git(to, 'rev-parse', 'refs/sdd/state');
  const s = await startServer(to, { args: ['--no-orchestrator'] });
  stopped.push(s);
  try {
    assert.ok(logLines(s).some((l) => /^state: restored 8 task files and \d+ other files from refs\/sdd\/state \(fetched board\)/.test(l)), logLines(s).join('\n'));
    assert.ok(logLines(s).includes('loaded 8 task(s)'), logLines(s).join('\n'));
    assert.ok(logLines(s).some((l) => l.startsWith(`audit: ${to}/.sdd/secrets/audit.key is missing but`)), 'a clone is told the audit key is a secret it lacks');
    assert.equal(await board(s), titles);
    await s.settled();
  } finally {
    await s.stop();
  }
  const tip = git(to, 'rev-parse', 'refs/sdd/state');
  assert.is(git(to, 'diff', '--name-only', '--diff-filter=D', fetched, tip), '', 'no path of the fetched board is deleted');
  assert.is(git(to, 'ls-tree', '-r', '--name-only', tip, '--', '.sdd/tasks').split('\n').filter((p) => p.endsWith('.json')).length, 8);
  assert.is(git(to, 'show', `${tip}:.sdd/config.yaml`), git(src.dir, 'show', 'refs/sdd/state:.sdd/config.yaml'), 'the team config is kept, not replaced by the template');
});

T('svc init in a clone with the ref materialises the board', async () => {
  const to = clone('init');
  git(to, 'fetch', '-q', src.dir, 'refs/sdd/state:refs/sdd/state');
  const r = await runCli(['init'], { cwd: to });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /restored 8 task files and \d+ other files from refs\/sdd\/state/);
  for (const id of titles.keys()) assert.ok(existsSync(join(to, '.sdd', 'tasks', id.slice(-2), `${id}.json`)), id);
});

T('deleting .sdd/tasks by hand and restarting restores them; a changed file is still committed as recover', async () => {
  const to = clone('deleted');
  git(to, 'fetch', '-q', src.dir, 'refs/sdd/state:refs/sdd/state');
  let s = await startServer(to, { args: ['--no-orchestrator'] });
  stopped.push(s);
  await s.settled();
  await s.stop();
  rmSync(join(to, '.sdd', 'tasks'), { recursive: true });
  const [id] = [...titles.keys()];
  s = await startServer(to, { args: ['--no-orchestrator'] });
  stopped.push(s);
  try {
    assert.ok(logLines(s).includes('state: restored 8 task files from refs/sdd/state (fetched board)'), logLines(s).join('\n'));
    assert.equal(await board(s), titles);
  } finally {
    await s.stop();
  }
  const file = join(to, '.sdd', 'tasks', id!.slice(-2), `${id}.json`);
  const edited = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...edited, priority: 1 }, null, 2) + '\n');
  rmSync(join(to, '.sdd', 'tasks', [...titles.keys()][1]!.slice(-2)), { recursive: true, force: true });
  s = await startServer(to, { args: ['--no-orchestrator'] });
  stopped.push(s);
  try {
    assert.ok(logLines(s).some((l) => /^state: restored [1-9]\d* task files? from refs\/sdd\/state \(missing on disk\); committed 1 changed path$/.test(l)), logLines(s).join('\n'));
    assert.is((await board(s)).size, 8);
  } finally {
    await s.stop();
  }
  assert.match(git(to, 'log', '-1', '--format=%s', 'refs/sdd/state'), /^recover: restored \d+, committed 1 \(tasks\//);
  assert.is(JSON.parse(git(to, 'show', `refs/sdd/state:.sdd/tasks/${id!.slice(-2)}/${id}.json`)).priority, 1);
  assert.is(git(to, 'diff', '--name-only', '--diff-filter=D', 'refs/sdd/state~1', 'refs/sdd/state'), '');
});

T.run();
