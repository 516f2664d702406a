import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, mergeSession } from '../../src/agents/index.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const M = suite('merge');
let repo: TempRepo;
const SID = 'backend-0000000a';

M.before.each(() => {
  repo = makeRepo('svc-merge-');
  writeFileSync(join(repo.dir, '.gitignore'), '.sdd/\n');
  writeFileSync(join(repo.dir, 'shared.txt'), 'line 1\n');
  repo.git('add', '.');
  repo.git('commit', '-q', '-m', 'base files');
});
M.after.each(() => repo.cleanup());

const git = () => createGit(repo.dir);

// The agent's session: a worktree on agent/<sid> with one commit writing `files`.
async function agentCommits(files: Record<string, string>) {
  const wt = await addWorktree({ git: git(), layout: sddLayout(repo.dir) }, SID, 'main');
  for (const [f, c] of Object.entries(files)) writeFileSync(join(wt.path, f), c);
  repo.git('-C', wt.path, 'add', '-A');
  repo.git('-C', wt.path, 'commit', '-q', '-m', 'agent work');
  return repo.git('rev-parse', `agent/${SID}`);
}

// Everything a user would notice about their checkout: HEAD, index, status and file bytes.
function userView(files: string[]) {
  return {
    head: repo.git('symbolic-ref', '-q', 'HEAD'),
    index: repo.git('ls-files', '-s'),
    status: repo.git('status', '--porcelain'),
    files: files.map((f) => { try { return readFileSync(join(repo.dir, f), 'utf8'); } catch { return null; } }),
  };
}

M('base not checked out: merged with plumbing, the user checkout untouched', async () => {
  const mainBefore = repo.git('rev-parse', 'main');
  const tip = await agentCommits({ 'feature.txt': 'from agent\n' });
  repo.git('checkout', '-q', '-b', 'user-work');
  writeFileSync(join(repo.dir, 'shared.txt'), 'user edit, not committed\n');
  writeFileSync(join(repo.dir, 'scratch.txt'), 'untracked\n');
  repo.git('add', 'scratch.txt');
  const before = userView(['shared.txt', 'scratch.txt', 'feature.txt']);

  const r = await mergeSession({ git: git() }, { sessionId: SID, base: 'main' });

  assert.is(r.status, 'merged');
  if (r.status !== 'merged') return;
  assert.is(r.method, 'plumbing');
  assert.is(repo.git('rev-parse', 'main'), r.commit);
  assert.is(repo.git('rev-parse', `${r.commit}^1`), mainBefore);
  assert.is(repo.git('rev-parse', `${r.commit}^2`), tip);
  assert.is(repo.git('show', 'main:feature.txt'), 'from agent');
  assert.equal(userView(['shared.txt', 'scratch.txt', 'feature.txt']), before);
});

M('base checked out and clean: merged there with a merge commit', async () => {
  await agentCommits({ 'feature.txt': 'from agent\n' });
  const r = await mergeSession({ git: git() }, { sessionId: SID, base: 'main', message: 'Merge task t1' });
  assert.is(r.status, 'merged');
  if (r.status !== 'merged') return;
  assert.is(r.method, 'worktree');
  assert.is(readFileSync(join(repo.dir, 'feature.txt'), 'utf8'), 'from agent\n');
  assert.is(repo.git('status', '--porcelain'), '');
  assert.is(repo.git('log', '-1', '--format=%s'), 'Merge task t1');
  assert.is(repo.git('rev-list', '--parents', '-1', 'HEAD').split(' ').length, 3);
});

M('base checked out with uncommitted changes: deferred, the user files byte-for-byte the same', async () => {
  await agentCommits({ 'feature.txt': 'from agent\n' });
  const mainBefore = repo.git('rev-parse', 'main');
  writeFileSync(join(repo.dir, 'shared.txt'), 'half-done user edit\n');
  const before = userView(['shared.txt', 'feature.txt']);
  const r = await mergeSession({ git: git() }, { sessionId: SID, base: 'main' });
  assert.is(r.status, 'deferred');
  if (r.status === 'deferred') assert.match(r.reason, /uncommitted changes/);
  assert.is(repo.git('rev-parse', 'main'), mainBefore);
  assert.equal(userView(['shared.txt', 'feature.txt']), before);
});

M('an untracked user file in the way: deferred, nothing changed', async () => {
  await agentCommits({ 'feature.txt': 'from agent\n' });
  writeFileSync(join(repo.dir, 'feature.txt'), 'the user own untracked file\n');
  const mainBefore = repo.git('rev-parse', 'main');
  const r = await mergeSession({ git: git() }, { sessionId: SID, base: 'main' });
  assert.is(r.status, 'deferred');
  assert.is(repo.git('rev-parse', 'main'), mainBefore);
  assert.is(readFileSync(join(repo.dir, 'feature.txt'), 'utf8'), 'the user own untracked file\n');
  assert.is(repo.git('status', '--porcelain', '--untracked-files=no'), '');
});

M('conflict: the paths are listed and nothing changes, checked out or not', async () => {
  await agentCommits({ 'shared.txt': 'agent version\n', 'clean.txt': 'fine\n' });
  writeFileSync(join(repo.dir, 'shared.txt'), 'main version\n');
  repo.git('commit', '-q', '-am', 'main changes shared.txt');
  const mainBefore = repo.git('rev-parse', 'main');
  const before = userView(['shared.txt', 'clean.txt']);
  assert.equal(await mergeSession({ git: git() }, { sessionId: SID, base: 'main' }), { status: 'conflict', paths: ['shared.txt'] });
  assert.is(repo.git('rev-parse', 'main'), mainBefore);
  assert.equal(userView(['shared.txt', 'clean.txt']), before);
  repo.git('checkout', '-q', '--detach');
  assert.equal(await mergeSession({ git: git() }, { sessionId: SID, base: 'main' }), { status: 'conflict', paths: ['shared.txt'] });
  assert.is(repo.git('rev-parse', 'main'), mainBefore);
});

M('a branch with nothing new is already merged', async () => {
  await addWorktree({ git: git(), layout: sddLayout(repo.dir) }, SID, 'main');
  const main = repo.git('rev-parse', 'main');
  assert.equal(await mergeSession({ git: git() }, { sessionId: SID, base: 'main' }), { status: 'already', commit: main });
  repo.git('checkout', '-q', '--detach');
  await agentCommits({ 'later.txt': 'more\n' });
  const first = await mergeSession({ git: git() }, { sessionId: SID, base: 'main' });
  assert.is(first.status, 'merged');
  assert.is((await mergeSession({ git: git() }, { sessionId: SID, base: 'main' })).status, 'already');
});

M.run();
