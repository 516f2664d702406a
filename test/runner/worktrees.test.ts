import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, planReconcile, reconcileWorktrees, retireSession, revParse } from '../../src/runner/index.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const W = suite('worktrees');
let repo: TempRepo;

W.before.each(() => {
  repo = makeRepo('svc-wt-');
  // What `svc init` puts there: the runtime folders of .sdd stay out of the user's status.
  writeFileSync(join(repo.dir, '.gitignore'), '.sdd/\n');
  repo.git('add', '.gitignore');
  repo.git('commit', '-q', '-m', 'ignore .sdd');
});
W.after.each(() => repo.cleanup());

const deps = () => ({ git: createGit(repo.dir), layout: sddLayout(repo.dir) });
const refExists = (ref: string) => {
  try {
    repo.git('rev-parse', '--verify', '-q', ref);
    return true;
  } catch {
    return false;
  }
};

// A session with a worktree; `commit` adds one commit on its branch.
async function session(sid: string, opts: { commit?: boolean } = {}) {
  const wt = await addWorktree(deps(), sid, 'main');
  if (opts.commit) {
    writeFileSync(join(wt.path, `${sid}.txt`), `work of ${sid}\n`);
    repo.git('-C', wt.path, 'add', '-A');
    repo.git('-C', wt.path, 'commit', '-q', '-m', `work ${sid}`);
  }
  return wt;
}

W('a new worktree is on agent/<sid> from the base, and the user checkout is untouched', async () => {
  const head = repo.git('rev-parse', 'HEAD');
  const wt = await session('backend-00000001');
  assert.is(wt.path, join(repo.dir, '.sdd/worktrees/backend-00000001'));
  assert.is(repo.git('-C', wt.path, 'symbolic-ref', '--short', 'HEAD'), 'agent/backend-00000001');
  assert.is(repo.git('-C', wt.path, 'rev-parse', 'HEAD'), head);
  assert.is(repo.git('symbolic-ref', '--short', 'HEAD'), 'main');
  assert.is(repo.git('status', '--porcelain'), '');
});

W('reconcile keeps live sessions, buries unmerged work, removes the rest', async () => {
  const live = await session('live-00000001', { commit: true });
  const done = await session('done-00000002', { commit: true });
  const doneTip = repo.git('rev-parse', 'agent/done-00000002');
  const empty = await session('empty-00000003');
  repo.git('branch', 'agent/orphan-00000004', 'agent/done-00000002');
  const head = repo.git('rev-parse', 'HEAD');

  const report = await reconcileWorktrees(deps(), { live: new Set(['live-00000001']), base: 'main' });

  assert.equal(report.adopted, ['live-00000001']);
  assert.ok(existsSync(join(live.path, 'live-00000001.txt')), 'a live worktree keeps its files');
  assert.is(repo.git('rev-parse', 'refs/sdd/graveyard/done-00000002'), doneTip);
  assert.is(repo.git('rev-parse', 'refs/sdd/graveyard/orphan-00000004'), doneTip, 'a branch without worktree is buried too');
  assert.not.ok(existsSync(done.path));
  assert.not.ok(refExists('refs/heads/agent/done-00000002'));
  assert.not.ok(existsSync(empty.path), 'a session with nothing new is simply removed');
  assert.not.ok(refExists('refs/heads/agent/empty-00000003'));
  assert.not.ok(refExists('refs/sdd/graveyard/empty-00000003'));
  assert.is(repo.git('rev-parse', 'HEAD'), head);
  assert.is(repo.git('status', '--porcelain'), '');
  assert.is(repo.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 2);
});

W('uncommitted changes of a removed worktree are preserved in the graveyard', async () => {
  const wt = await session('dirty-00000001');
  writeFileSync(join(wt.path, 'README.md'), 'edited by the agent\n');
  writeFileSync(join(wt.path, 'new-file.txt'), 'never committed\n');
  const base = repo.git('rev-parse', 'main');

  const r = await retireSession(deps(), 'dirty-00000001', 'main');

  assert.equal(r.graveyard, ['refs/sdd/graveyard/dirty-00000001']);
  assert.not.ok(existsSync(wt.path));
  const ref = 'refs/sdd/graveyard/dirty-00000001';
  assert.is(repo.git('rev-parse', `${ref}^`), base);
  assert.is(repo.git('show', `${ref}:README.md`), 'edited by the agent');
  assert.is(repo.git('show', `${ref}:new-file.txt`), 'never committed');
  assert.is(readFileSync(join(repo.dir, 'README.md'), 'utf8'), '# temp repo\n', 'the user file is untouched');
});

W('a live session whose worktree folder vanished gets it back; missing dirs are pruned', async () => {
  const wt = await session('back-00000001', { commit: true });
  const gone = await session('gone-00000002');
  rmSync(wt.path, { recursive: true, force: true });
  rmSync(gone.path, { recursive: true, force: true });
  const report = await reconcileWorktrees(deps(), { live: new Set(['back-00000001']), base: 'main' });
  assert.equal(report.recreated, ['back-00000001']);
  assert.ok(existsSync(join(wt.path, 'back-00000001.txt')), 'committed work is checked out again');
  assert.not.ok(refExists('refs/heads/agent/gone-00000002'));
  assert.not.ok(repo.git('worktree', 'list').includes('gone-00000002'));
});

W('an older graveyard ref with other work is never overwritten', async () => {
  await session('again-00000001', { commit: true });
  const unrelated = repo.git('commit-tree', repo.git('rev-parse', 'HEAD^{tree}'), '-m', 'older loss');
  repo.git('update-ref', 'refs/sdd/graveyard/again-00000001', unrelated);
  const r = await retireSession(deps(), 'again-00000001', 'main');
  assert.equal(r.graveyard, ['refs/sdd/graveyard/again-00000001.2']);
  assert.is(repo.git('rev-parse', 'refs/sdd/graveyard/again-00000001'), unrelated);
});

W('plan: live with worktree adopted, live without re-added, others retired', () => {
  const plan = planReconcile({ live: new Set(['a', 'b']), worktreeSids: ['a', 'c'], branchSids: ['a', 'b', 'c', 'd'] });
  assert.equal(plan, { adopt: ['a'], recreate: ['b'], retire: ['c', 'd'] });
});

W('a branch is read from its loose file, a packed one and a missing one through git: the same answers', async () => {
  const git = createGit(repo.dir);
  const main = repo.git('rev-parse', 'refs/heads/main');
  repo.git('branch', 'other');
  assert.is(await revParse(git, 'refs/heads/main'), main);
  assert.is(await revParse(git, 'refs/heads/missing'), null);
  repo.git('pack-refs', '--all');
  assert.not.ok(existsSync(join(repo.dir, '.git', 'refs', 'heads', 'other')), 'packed');
  assert.is(await revParse(git, 'refs/heads/other'), main);
  assert.is(await revParse(git, 'refs/heads/missing'), null);
});

W.run();
