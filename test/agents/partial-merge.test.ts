import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, classifyFiles, partialMerge, readMergeState, stateAsResponse } from '../../src/agents/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const P = suite('partial merge');
let repo: TempRepo;
let wt: string;
const SID = 'backend-0000000b';

P.before.each(async () => {
  repo = makeRepo('svc-pm-');
  writeFileSync(join(repo.dir, '.gitignore'), '.sdd/\n');
  writeFileSync(join(repo.dir, 'shared.txt'), 'line 1\n');
  repo.git('add', '.');
  repo.git('commit', '-q', '-m', 'base files');
  wt = (await addWorktree({ git: createGit(repo.dir), layout: sddLayout(repo.dir) }, SID, 'main')).path;
});
P.after.each(() => repo.cleanup());

const deps = () => ({ git: createGit(repo.dir), layout: sddLayout(repo.dir), clock: manualClock() });
function agentCommit(files: Record<string, string>) {
  for (const [f, c] of Object.entries(files)) writeFileSync(join(wt, f), c);
  repo.git('-C', wt, 'add', '-A');
  repo.git('-C', wt, 'commit', '-q', '-m', 'agent work');
}

P('only committed files are merged; uncommitted and missing ones are listed', async () => {
  agentCommit({ 'a.txt': 'A\n', 'b.txt': 'B\n' });
  writeFileSync(join(wt, 'b.txt'), 'B edited, not committed\n');
  writeFileSync(join(wt, 'c.txt'), 'untracked\n');

  const r = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['a.txt', './b.txt', 'c.txt', 'nope.txt'] });

  assert.is(r.status, 'ok');
  if (r.status !== 'ok') return;
  assert.equal(r.merged_files, ['a.txt']);
  assert.equal(r.uncommitted_files, ['b.txt', 'c.txt', 'nope.txt']);
  assert.equal(r.skipped_already_merged, []);
  assert.equal(r.conflicting_files, []);
  assert.is(repo.git('rev-parse', 'main'), r.commit_sha);
  assert.is(repo.git('show', 'main:a.txt'), 'A');
  assert.is(repo.git('ls-tree', '--name-only', 'main', 'b.txt'), '');
  // main is checked out: the user's checkout follows, and stays clean.
  assert.is(readFileSync(join(repo.dir, 'a.txt'), 'utf8'), 'A\n');
  assert.is(repo.git('status', '--porcelain'), '');
});

P('a second call skips what was merged before and keeps cumulative state', async () => {
  agentCommit({ 'a.txt': 'A\n', 'b.txt': 'B\n' });
  const first = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['a.txt'] });
  const second = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['a.txt', 'b.txt'], message: 'take b' });
  assert.is(second.status, 'ok');
  if (second.status !== 'ok' || first.status !== 'ok') return;
  assert.equal(second.skipped_already_merged, ['a.txt']);
  assert.equal(second.merged_files, ['b.txt']);
  assert.is(repo.git('log', '-1', '--format=%s', 'main'), 'take b');
  const state = await readMergeState(sddLayout(repo.dir), SID);
  assert.equal(state, { session_id: SID, merged_files: ['a.txt', 'b.txt'], merge_commits: [first.commit_sha, second.commit_sha], last_merged_at: '2026-01-01T00:00:00.000Z' });
  assert.ok(readFileSync(join(repo.dir, '.sdd/runtime/merges', `${SID}.json`), 'utf8').endsWith('}\n'));
  assert.equal(stateAsResponse(state).commit_sha, second.commit_sha);
});

P('refused when the user has changes to a target file; nothing changes', async () => {
  agentCommit({ 'shared.txt': 'agent\n', 'x.txt': 'X\n' });
  writeFileSync(join(repo.dir, 'shared.txt'), 'user is editing\n');
  const main = repo.git('rev-parse', 'main');
  const r = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['shared.txt', 'x.txt'] });
  assert.is(r.status, 'refused');
  if (r.status === 'refused') assert.equal(r.files, ['shared.txt']);
  assert.is(repo.git('rev-parse', 'main'), main);
  assert.is(readFileSync(join(repo.dir, 'shared.txt'), 'utf8'), 'user is editing\n');
  assert.is((await readMergeState(sddLayout(repo.dir), SID)).merged_files.length, 0);
});

P('user changes to other files do not block and stay untouched', async () => {
  agentCommit({ 'x.txt': 'X\n' });
  writeFileSync(join(repo.dir, 'shared.txt'), 'user is editing\n');
  const r = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['x.txt'] });
  assert.is(r.status, 'ok');
  assert.is(readFileSync(join(repo.dir, 'shared.txt'), 'utf8'), 'user is editing\n');
  assert.is(repo.git('status', '--porcelain'), 'M shared.txt');
});

P('base not checked out: committed by plumbing, the user branch untouched', async () => {
  agentCommit({ 'a.txt': 'A\n' });
  repo.git('checkout', '-q', '-b', 'mine');
  writeFileSync(join(repo.dir, 'a.txt'), 'user untracked a\n');
  const r = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['a.txt'] });
  assert.is(r.status, 'ok');
  assert.is(repo.git('show', 'main:a.txt'), 'A');
  assert.is(repo.git('symbolic-ref', '--short', 'HEAD'), 'mine');
  assert.is(readFileSync(join(repo.dir, 'a.txt'), 'utf8'), 'user untracked a\n');
});

P('a file changed on both sides since the fork is conflicting, not overwritten', async () => {
  agentCommit({ 'shared.txt': 'agent\n', 'a.txt': 'A\n' });
  writeFileSync(join(repo.dir, 'shared.txt'), 'main moved on\n');
  repo.git('commit', '-q', '-am', 'main edit');
  const r = await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['shared.txt', 'a.txt'] });
  assert.is(r.status, 'ok');
  if (r.status !== 'ok') return;
  assert.equal(r.conflicting_files, ['shared.txt']);
  assert.equal(r.merged_files, ['a.txt']);
  assert.is(repo.git('show', 'main:shared.txt'), 'main moved on');
});

P('bad input is rejected before any git work', async () => {
  assert.is((await partialMerge(deps(), { sessionId: SID, base: 'main', files: [] })).status, 'invalid');
  assert.is((await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['../etc/passwd'] })).status, 'invalid');
  assert.is((await partialMerge(deps(), { sessionId: SID, base: 'main', files: ['/abs'] })).status, 'invalid');
});

P('classify: branch untouched file never reverts base', () => {
  const e = (oid: string) => ({ mode: '100644', oid });
  const c = classifyFiles({
    files: ['same', 'new', 'old', 'both'],
    alreadyMerged: new Set(),
    dirtyInWorktree: new Set(),
    branch: new Map([['same', e('1')], ['new', e('2')], ['old', e('3')], ['both', e('4')]]),
    base: new Map([['same', e('1')], ['old', e('9')], ['both', e('8')]]),
    fork: new Map([['old', e('3')], ['both', e('7')]]),
  });
  assert.equal(c, { skipped: [], uncommitted: [], conflicting: ['both'], unchanged: ['same', 'old'], write: ['new'] });
});

P.run();
