import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createCommitter } from '../../src/store/committer.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createRecordStore } from '../../src/store/records/shared.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

type Task = { version: number; id: string; status: string };
const committer = suite('store committer');
let repo: TempRepo;
committer.before.each(() => {
  repo = makeRepo('svc-commit-');
});
committer.after.each(() => repo.cleanup());

const setup = (root = repo.dir, intervalMs = 60_000) => {
  const layout = sddLayout(root);
  const c = createCommitter({ layout, git: createGit(root), log: silentLogger(), clock: manualClock(), intervalMs, gcEveryCommits: 0 });
  const store = createRecordStore({ layout, committer: c, log: silentLogger() });
  return { layout, c, store };
};
const task = (id: string): Task => ({ version: 1, id, status: 'open' });
const tree = (ref = 'refs/sdd/state') => repo.git('ls-tree', '-r', '--name-only', ref).split('\n').filter(Boolean);
const subjects = () => repo.git('log', '--format=%s', 'refs/sdd/state').split('\n');
const userView = () => {
  const index = join(repo.dir, '.git', 'index');
  return {
    // GIT_OPTIONAL_LOCKS=0: our own `git status` must not refresh the index it is checking.
    status: execFileSync('git', ['status', '--porcelain'], { cwd: repo.dir, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }),
    head: repo.git('rev-parse', 'HEAD'), branch: repo.git('symbolic-ref', 'HEAD'),
    index: createHash('sha1').update(readFileSync(index)).digest('hex'), mtime: statSync(index).mtimeMs,
  };
};

committer('each flush is one commit naming its notes; only committed folders reach the tree; the user repo is untouched', async () => {
  const { layout, c, store } = setup();
  mkdirSync(layout.sdd, { recursive: true });
  writeFileSync(join(layout.sdd, '.gitignore'), 'runtime/\nsecrets/\nworktrees/\n');
  const before = userView();
  assert.is(await c.head(), null);
  await store.create(layout.task('t0001'), task('t0001'), 'create t0001');
  await store.create(layout.task('t0002'), task('t0002'), 'create t0002');
  await store.writeJson(layout.agent('s1'), { pid: 1 });
  await store.writeJson(layout.tokens, { secret: 'x' });
  mkdirSync(layout.worktree('s1'), { recursive: true });
  writeFileSync(join(layout.worktree('s1'), 'a.txt'), 'x');
  c.touch(join(layout.worktree('s1'), 'a.txt'));
  c.touch(join(layout.sdd, 'tasks', '01', '.x.tmp'));
  assert.is(c.pending, 2);
  const flushing = c.flush();
  await new Promise((r) => setImmediate(r));
  assert.is(c.pending, 2, 'paths of the commit running are not in the ref yet: still pending');
  const first = await flushing;
  assert.is(first?.message, '2 changes: create t0001; create t0002');
  assert.is(first?.paths, 2);
  assert.is(c.pending, 0);

  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'claimed' }), { note: 'claim t0001 by backend-3f2a' });
  await store.appendJsonl(layout.progress('t0001'), { msg: 'hi' });
  await c.flush();
  await store.remove(layout.task('t0002'), 'delete t0002');
  await c.flush();
  await store.writeJson(layout.tenants, { default: {} });
  await c.flush();
  assert.is(await c.flush(), null, 'nothing dirty, no commit');

  assert.equal(subjects(), ['update 1 path', 'delete t0002', 'claim t0001 by backend-3f2a', '2 changes: create t0001; create t0002']);
  assert.equal(tree(), ['.sdd/progress/01/t0001.jsonl', '.sdd/tasks/01/t0001.json', '.sdd/tenants.json']);
  assert.equal(JSON.parse(repo.git('show', 'refs/sdd/state:.sdd/tasks/01/t0001.json')), { ...task('t0001'), status: 'claimed', version: 2 });
  assert.match(repo.git('log', '-p', 'refs/sdd/state', '--', '.sdd/tasks'), '"status": "claimed"');
  assert.is(repo.git('log', '-1', '--format=%an <%ae> %cn <%ce>', 'refs/sdd/state'), 'svc <svc@localhost> svc <svc@localhost>');
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
  assert.equal(userView(), before);
});

committer('concurrent flushes and touches lose nothing; stop() makes the final commit', async () => {
  const { layout, c, store } = setup(repo.dir, 20);
  c.start();
  const ids = Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(4, '0')}`);
  await Promise.all(ids.map(async (id, i) => {
    await store.create(layout.task(id), task(id), `create ${id}`);
    if (i % 7 === 0) await c.flush();
  }));
  await new Promise((r) => setTimeout(r, 60));
  await store.update<Task>(layout.task('t0003'), (t) => ({ ...t, status: 'done' }), { note: 'complete t0003' });
  await c.stop();
  assert.is(c.pending, 0);
  assert.is(tree().length, 40);
  assert.match(repo.git('show', 'refs/sdd/state:.sdd/tasks/03/t0003.json'), '"done"');
  const count = Number(repo.git('rev-list', '--count', 'refs/sdd/state'));
  assert.ok(count >= 2 && count <= 10, `a few group commits, got ${count}`);
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

committer('a message with many notes is cut at 20 items', async () => {
  const { layout, c, store } = setup();
  for (let i = 0; i < 25; i++) await store.create(layout.task(`t${i}`), task(`t${i}`), `create t${i}`);
  const r = await c.flush();
  const [subject, body] = r!.message.split('\n\n');
  assert.ok(subject!.startsWith('25 changes: create t0;') && subject!.endsWith('create t19; … and 5 more'), r!.message);
  assert.is(subject!.split('; ').length, 21);
  assert.is(body, 'create t20\ncreate t21\ncreate t22\ncreate t23\ncreate t24', 'the rest is in the body');
});

committer('a ref moved behind the committer\'s back is retried on top; nothing is lost', async () => {
  const a = setup();
  await a.store.create(a.layout.task('t0001'), task('t0001'), 'create t0001');
  await a.c.flush();
  // Someone else commits onto the ref (another committer instance).
  const b = setup();
  await b.store.writeJson(b.layout.tenants, { other: true }, 'other writer');
  await b.c.flush();
  // And a plain git user moves it once more.
  const manual = repo.git('commit-tree', 'refs/sdd/state^{tree}', '-p', 'refs/sdd/state', '-m', 'manual');
  repo.git('update-ref', 'refs/sdd/state', manual);
  await a.store.create(a.layout.task('t0002'), task('t0002'), 'create t0002');
  const r = await a.c.flush();
  assert.is(r?.message, 'create t0002');
  assert.equal(subjects(), ['create t0002', 'manual', 'other writer', 'create t0001']);
  assert.equal(tree(), ['.sdd/tasks/01/t0001.json', '.sdd/tasks/02/t0002.json', '.sdd/tenants.json']);
  assert.is(repo.git('rev-parse', 'refs/sdd/state^'), manual);
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

committer('from a linked worktree the ref lands in the main repository', async () => {
  const wt = join(repo.dir, '..', `${repo.dir.split('/').pop()}-wt`);
  repo.git('worktree', 'add', '-q', '--detach', wt);
  try {
    const { layout, c, store } = setup(wt);
    await store.create(layout.task('t0001'), task('t0001'), 'create t0001');
    const r = await c.flush();
    assert.is(repo.git('rev-parse', 'refs/sdd/state'), r!.oid);
    assert.equal(tree(), ['.sdd/tasks/01/t0001.json']);
    assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
  } finally {
    repo.git('worktree', 'remove', '--force', wt);
  }
});

committer('commits go through one long-lived fast-import and one update-ref --stdin, ended at stop', async () => {
  const { layout, c, store } = setup();
  // Our git processes: those whose working directory is this repository.
  const ours = (name: string) => execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n')
    .filter((l) => l.includes(`git `) && l.includes(name) && !l.includes('ps -eo')).map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => { try { return readlinkSync(`/proc/${pid}/cwd`) === repo.dir; } catch { return false; } });
  const pids = new Set<number>();
  for (let i = 0; i < 4; i++) {
    await store.create(layout.task(`s000${i}`), task(`s000${i}`), `create s000${i}`);
    await c.flush();
    for (const pid of [...ours('fast-import'), ...ours('update-ref')]) pids.add(pid);
  }
  assert.is(Number(repo.git('rev-list', '--count', 'refs/sdd/state')), 4);
  assert.is(pids.size, 2, `two processes for four commits: ${[...pids].join(', ')}`);
  await c.stop();
  assert.equal([...ours('fast-import'), ...ours('update-ref')], [], 'none left after stop');
  assert.is(repo.git('fsck', '--strict', '--no-dangling').trim(), '');
});

committer('a commit reads through the writer\'s pending text, else the file; a pending null deletes', async () => {
  const { layout, c } = setup();
  const abs = layout.task('t0009');
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, 'stale file\n');
  const pending = new Map<string, string | null>([[abs, 'written behind\n']]);
  c.readThrough((p) => pending.get(p));
  c.touch(abs, 'update t0009');
  await c.flush();
  assert.is(repo.git('show', `refs/sdd/state:.sdd/tasks/${'t0009'.slice(-2)}/t0009.json`), 'written behind', 'the pending text, not the stale file');
  pending.delete(abs);
  c.touch(abs, 'hand edit');
  await c.flush();
  assert.is(repo.git('show', `refs/sdd/state:.sdd/tasks/${'t0009'.slice(-2)}/t0009.json`), 'stale file', 'nothing pending: the file');
  const before = await c.head();
  c.touch(abs, 'touched, unchanged');
  assert.is(await c.flush(), null, 'an unchanged tree is no commit');
  assert.is(await c.head(), before);
  pending.set(abs, null);
  c.touch(abs, 'remove t0009');
  await c.flush();
  assert.not.ok(tree().some((p) => p.endsWith('t0009.json')), 'a pending null deletes');
});

committer('a large append-only file (an audit segment) is streamed into the commit whole', async () => {
  const { layout, c } = setup();
  const segment = join(layout.sdd, 'audit', '2026-01-01.jsonl');
  mkdirSync(join(segment, '..'), { recursive: true });
  const line = JSON.stringify({ pad: 'x'.repeat(200) }) + '\n';
  writeFileSync(segment, line.repeat(3000)); // ~600 KiB: streamed from its descriptor
  c.touch(segment, 'audit');
  const r = await c.flush();
  assert.is(r?.paths, 1);
  assert.is(repo.git('show', 'refs/sdd/state:.sdd/audit/2026-01-01.jsonl').length + 1, line.length * 3000, 'the segment whole');
  assert.is(repo.git('fsck', '--strict', '--no-dangling').trim(), '');
});

committer('a commit is one packfile: no loose objects, and the pack count stays small after many commits', async () => {
  const { layout, c, store } = setup();
  const loose = () => Number(/^count: (\d+)/m.exec(repo.git('count-objects', '-v'))![1]);
  const packs = () => Number(/^packs: (\d+)/m.exec(repo.git('count-objects', '-v'))![1]);
  const before = loose();
  for (let i = 0; i < 40; i++) {
    await store.create(layout.task(`p${String(i).padStart(4, '0')}`), task(`p${i}`), `create p${i}`);
    await c.flush();
  }
  await c.stop(); // waits for the repack queued behind the commits
  assert.ok(loose() <= before, 'no loose object written');
  assert.ok(packs() < 40, `${packs()} packs after 40 commits (geometric repack)`);
  assert.is(tree().filter((p) => p.includes('/tasks/')).length, 40);
  assert.is(repo.git('fsck', '--strict', '--no-dangling').trim(), '');
});

committer('timed commits are paced by how long the last one took: a slow commit (a big audit segment) is not repeated back to back', async () => {
  const layout = sddLayout(repo.dir);
  const clock = manualClock();
  // Each commit seems to take 300 ms on the committer's clock: the next timed one waits 3 x 300 ms, not 20.
  const c = createCommitter({ layout, git: createGit(repo.dir), log: silentLogger(), clock, intervalMs: 20, gcEveryCommits: 0, onCommit: () => clock.advance(300) });
  const store = createRecordStore({ layout, committer: c, log: silentLogger() });
  const commits = () => Number(repo.git('rev-list', '--count', 'refs/sdd/state'));
  c.start();
  await store.create(layout.task('t0001'), task('t0001'), 'create t0001');
  for (let i = 0; i < 300 && !(await c.head()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(commits(), 1);
  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'claimed' }), { note: 'claim t0001' });
  await new Promise((r) => setTimeout(r, 400));
  assert.is(commits(), 1, 'the second commit waits about 900 ms after a commit that took 300');
  for (let i = 0; i < 300 && commits() < 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.is(commits(), 2, 'and then it comes');
  await c.stop();
});

committer('the pace has a ceiling: after a commit that took minutes (a bulk import), the next timed one still comes', async () => {
  const layout = sddLayout(repo.dir);
  const clock = manualClock();
  // Each commit seems to take 10 minutes; the ceiling (100 ms here, 10 s by default) bounds the wait.
  const c = createCommitter({ layout, git: createGit(repo.dir), log: silentLogger(), clock, intervalMs: 20, paceMaxMs: 100, gcEveryCommits: 0, onCommit: () => clock.advance(600_000) });
  const store = createRecordStore({ layout, committer: c, log: silentLogger() });
  const commits = () => Number(repo.git('rev-list', '--count', 'refs/sdd/state'));
  c.start();
  await store.create(layout.task('t0001'), task('t0001'), 'create t0001');
  for (let i = 0; i < 300 && !(await c.head()); i++) await new Promise((r) => setTimeout(r, 10));
  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'claimed' }), { note: 'claim t0001' });
  const t0 = Date.now();
  for (let i = 0; i < 300 && commits() < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(commits(), 2, 'the second commit came');
  assert.ok(Date.now() - t0 < 2500, `within the ceiling and a commit, not 30 minutes (${Date.now() - t0} ms)`);
  await c.stop();
});

committer('while changes keep coming, a timed commit leaves a large log (an audit segment) for later; it follows within 5 s or once quiet, and a flush takes it at once', async () => {
  const layout = sddLayout(repo.dir);
  const clock = manualClock();
  const c = createCommitter({ layout, git: createGit(repo.dir), log: silentLogger(), clock, intervalMs: 20, gcEveryCommits: 0 });
  const store = createRecordStore({ layout, committer: c, log: silentLogger() });
  const segment = join(layout.sdd, 'audit', '2026-01-01.jsonl');
  mkdirSync(join(segment, '..'), { recursive: true });
  const line = JSON.stringify({ pad: 'x'.repeat(200) }) + '\n';
  const committedLines = () => repo.git('show', 'refs/sdd/state:.sdd/audit/2026-01-01.jsonl').split('\n').length;
  const commits = () => Number(repo.git('rev-list', '--count', 'refs/sdd/state'));
  const until = async (ok: () => boolean) => { for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10)); };
  writeFileSync(segment, line.repeat(3000)); // ~600 KiB
  c.touch(segment, 'audit');
  await store.create(layout.task('t0001'), task('t0001'), 'create t0001');
  c.start();
  for (let i = 0; i < 500 && !(await c.head()); i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(committedLines(), 3000, 'the first commit takes the segment');
  writeFileSync(segment, line.repeat(3001));
  c.touch(segment, 'audit'); // the clock stands still: changes keep coming
  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'claimed' }), { note: 'claim t0001' });
  await until(() => commits() >= 2);
  assert.is(JSON.parse(repo.git('show', 'refs/sdd/state:.sdd/tasks/' + layout.task('t0001').split('/tasks/')[1])).status, 'claimed', 'the task goes at once');
  assert.is(committedLines(), 3000, 'the large log waits');
  await until(() => c.pending === 1); // the commit that moved the ref has returned
  assert.is(c.pending, 1);
  clock.advance(5_000);
  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'in_progress' }), { note: 'start t0001' }); // still busy
  await until(() => committedLines() === 3001);
  assert.is(committedLines(), 3001, 'it follows once 5 s passed, busy or not');
  writeFileSync(segment, line.repeat(3002));
  c.touch(segment, 'audit');
  await store.update<Task>(layout.task('t0001'), (t) => ({ ...t, status: 'done' }), { note: 'complete t0001' });
  await until(() => commits() >= 4);
  assert.is(committedLines(), 3001, 'busy again: it waits');
  clock.advance(100); // no change for longer than the interval: the board is quiet
  await until(() => committedLines() === 3002);
  assert.is(committedLines(), 3002, 'a quiet board takes it at the next timed commit');
  writeFileSync(segment, line.repeat(3003));
  c.touch(segment, 'audit');
  await c.flush();
  assert.is(committedLines(), 3003, 'a flush takes every path');
  await c.stop();
});

committer.run();
