// An agent plants every git mechanism that runs a program (fsmonitor, hooks, filters, diff and merge
// drivers, textconv, transports, config.worktree, a redirected .git file); the server's own git
// operations on its worktree and branch (status, snapshot, merge, partial merge, retire) run none of them.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, dirtyPaths, mergeSession, partialMerge, retireSession } from '../../src/agents/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { driverOverrides, touchesContent } from '../../src/store/git-harden.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const H = suite('git hardening');
let repo: TempRepo;
let marks: string;
H.before.each(() => {
  repo = makeRepo('svc-harden-');
  writeFileSync(join(repo.dir, '.gitignore'), '.sdd/\n');
  repo.git('add', '.gitignore');
  repo.git('commit', '-q', '-m', 'ignore .sdd');
  marks = join(repo.dir, '.sdd', 'marks');
  mkdirSync(marks, { recursive: true });
});
H.after.each(() => repo.cleanup());

const SID = 'backend-0000beef';
const deps = () => ({ git: createGit(repo.dir), layout: sddLayout(repo.dir), clock: manualClock() });
const ran = () => readdirSync(marks).sort();
// A script that leaves a mark named after what ran it, then behaves like `cat` (a plausible filter).
function script(name: string): string {
  const p = join(repo.dir, '.sdd', `${name}.sh`);
  writeFileSync(p, `#!/bin/sh\ntouch '${join(marks, name)}'\ncat\n`);
  chmodSync(p, 0o755);
  return p;
}
// What an agent with a shell in its worktree can do to the repository's config (no sandbox).
function plantRepoConfig(wt: string): void {
  const g = (...a: string[]) => repo.git('-C', wt, ...a);
  g('config', 'core.fsmonitor', script('fsmonitor'));
  const hooks = join(repo.dir, '.sdd', 'planted-hooks');
  mkdirSync(hooks, { recursive: true });
  for (const h of ['post-checkout', 'post-merge', 'pre-commit', 'post-commit', 'reference-transaction', 'post-index-change', 'pre-merge-commit']) {
    writeFileSync(join(hooks, h), `#!/bin/sh\ntouch '${join(marks, `hook-${h}`)}'\n`);
    chmodSync(join(hooks, h), 0o755);
    writeFileSync(join(repo.dir, '.git', 'hooks', h), `#!/bin/sh\ntouch '${join(marks, `githook-${h}`)}'\n`);
    chmodSync(join(repo.dir, '.git', 'hooks', h), 0o755);
  }
  g('config', 'core.hooksPath', hooks);
  for (const k of ['clean', 'smudge']) g('config', `filter.evil.${k}`, script(`filter-${k}`));
  g('config', 'filter.evil.required', 'true');
  g('config', 'diff.evil.textconv', script('textconv'));
  g('config', 'diff.evil.command', script('diffcmd'));
  g('config', 'diff.external', script('external-diff'));
  g('config', 'merge.evil.driver', script('merge-driver'));
  g('config', 'protocol.ext.allow', 'always');
  g('config', 'submodule.recurse', 'true');
  writeFileSync(join(wt, '.gitattributes'), '* filter=evil diff=evil merge=evil\n');
}

H('the pure parts: which commands touch content, and repository-level drivers are emptied', () => {
  assert.ok(touchesContent(['status', '--porcelain']));
  assert.ok(touchesContent(['worktree', 'add', 'x']));
  assert.not.ok(touchesContent(['rev-parse', 'HEAD']));
  assert.not.ok(touchesContent(['-c', 'fastimport.unpackLimit=0', 'fast-import']));
  assert.ok(touchesContent(['write-tree']));
  const listing = 'local\tfilter.evil.clean x\nglobal\tfilter.lfs.clean git-lfs clean\nworktree\tmerge.m.driver y\nlocal\tdiff.external z\nlocal\tdiff.t.textconv w\n';
  assert.equal(driverOverrides(listing).filter((a) => a !== '-c'), [
    'filter.evil.clean=', 'filter.evil.smudge=', 'filter.evil.process=', 'filter.evil.required=false', 'merge.m.driver=', 'diff.external=', 'diff.t.command=', 'diff.t.textconv=',
  ]);
});

H('repository config planted by an agent: status, snapshot, merge, partial merge and retire run nothing', async () => {
  const wt = (await addWorktree(deps(), SID, 'main')).path;
  writeFileSync(join(wt, 'work.txt'), 'agent work\n');
  repo.git('-C', wt, 'add', 'work.txt');
  repo.git('-C', wt, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'work');
  plantRepoConfig(wt);
  repo.git('-C', wt, '-c', 'core.hooksPath=/dev/null', '-c', 'filter.evil.clean=cat', '-c', 'core.fsmonitor=false', 'add', '.gitattributes');
  repo.git('-C', wt, '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', 'commit', '-q', '-m', 'attributes');
  writeFileSync(join(wt, 'work.txt'), 'changed after the commit\n');
  writeFileSync(join(wt, 'untracked.txt'), 'new\n');
  // The agent's own git ran its filter while planting; only what the server runs from here counts.
  rmSync(marks, { recursive: true });
  mkdirSync(marks);
  assert.equal((await dirtyPaths(deps().git, wt, { untracked: true })).sort(), ['untracked.txt', 'work.txt']);
  const pm = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['.gitattributes'] });
  assert.is(pm.status, 'ok');
  const merged = await mergeSession(deps(), { sessionId: SID, base: 'main' });
  assert.is(merged.status, 'merged');
  assert.is(repo.git('show', 'main:work.txt'), 'agent work', 'content merged as committed, no filter applied');
  await addWorktree(deps(), 'other-00000001', 'main');
  const r = await retireSession(deps(), SID, 'main');
  assert.ok(r.graveyard.length === 1, 'uncommitted work kept');
  assert.equal(ran(), [], `no planted program ran: ${ran().join(', ')}`);
});

H('a driver planted after the server\'s git looked once is still emptied: the check is reused only while the config files read the same, never across an include', async () => {
  const git = createGit(repo.dir);
  const d = { ...deps(), git };
  // An agent's uncommitted work under `* filter=evil`: retire saves it to the graveyard (`git add`, where a
  // clean filter runs), after the server's git looked at the worktree while the config was clean.
  const session = async (sid: string) => {
    const wt = (await addWorktree(d, sid, 'main')).path;
    writeFileSync(join(wt, '.gitattributes'), '* filter=evil\n');
    writeFileSync(join(wt, 'work.txt'), 'agent work\n');
    assert.equal((await dirtyPaths(git, wt, { untracked: true })).sort(), ['.gitattributes', 'work.txt']);
  };
  const planted = (name: string) => `[filter "evil"]\n\tclean = ${script(`${name}-clean`)}\n\tsmudge = ${script(`${name}-smudge`)}\n\trequired = true\n`;
  const config = join(repo.dir, '.git', 'config');
  await session(SID);
  writeFileSync(config, `${readFileSync(config, 'utf8')}${planted('config')}`);
  assert.is((await retireSession(d, SID, 'main')).graveyard.length, 1);
  assert.equal(ran(), [], `a planted program ran: ${ran().join(', ')}`);
  // The drivers in a file the config includes: the config reads the same when that file changes.
  repo.git('config', '--remove-section', 'filter.evil');
  const included = join(repo.dir, '.sdd', 'included.cfg');
  writeFileSync(included, '');
  repo.git('config', 'include.path', included);
  await session('other-00000001');
  writeFileSync(included, planted('included'));
  assert.is((await retireSession(d, 'other-00000001', 'main')).graveyard.length, 1);
  assert.equal(ran(), [], `a planted program ran: ${ran().join(', ')}`);
});

H('config.worktree (extensions.worktreeConfig) planted in the agent worktree is not obeyed', async () => {
  repo.git('config', 'extensions.worktreeConfig', 'true');
  const wt = (await addWorktree(deps(), SID, 'main')).path;
  const g = (...a: string[]) => repo.git('-C', wt, ...a);
  g('config', '--worktree', 'core.fsmonitor', script('wt-fsmonitor'));
  g('config', '--worktree', 'filter.wt.clean', script('wt-filter'));
  g('config', '--worktree', 'core.hooksPath', join(repo.dir, '.git', 'hooks'));
  writeFileSync(join(repo.dir, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch '${join(marks, 'wt-hook')}'\n`);
  chmodSync(join(repo.dir, '.git', 'hooks', 'post-checkout'), 0o755);
  writeFileSync(join(wt, '.gitattributes'), '* filter=wt\n');
  writeFileSync(join(wt, 'a.txt'), 'a\n');
  assert.equal((await dirtyPaths(deps().git, wt, { untracked: true })).sort(), ['.gitattributes', 'a.txt']);
  await retireSession(deps(), SID, 'main');
  assert.equal(ran(), []);
});

H('a .git file or commondir pointed elsewhere does not move the server to another repository', async () => {
  const wt = (await addWorktree(deps(), SID, 'main')).path;
  // An attacker's repository inside the worktree, with a config that runs programs.
  const evil = join(wt, 'evil.git');
  repo.git('init', '-q', '--bare', evil);
  repo.git('--git-dir', evil, 'config', 'core.fsmonitor', script('redirect-fsmonitor'));
  repo.git('--git-dir', evil, 'config', 'filter.x.clean', script('redirect-filter'));
  writeFileSync(join(wt, '.gitattributes'), '* filter=x\n');
  writeFileSync(join(wt, '.git'), `gitdir: ${evil}\n`);
  const admin = join(repo.dir, '.git', 'worktrees', SID);
  writeFileSync(join(admin, 'commondir'), `${evil}\n`);
  const dirty = await dirtyPaths(deps().git, wt, { untracked: true });
  assert.ok(dirty.includes('.gitattributes'), 'status read the real worktree against its real HEAD');
  assert.equal(ran(), []);
  assert.ok(existsSync(join(repo.dir, '.git', 'worktrees', SID)));
});

H.run();
