import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { createStateMirror } from '../../src/store/mirror.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

// The repository /state.git serves from: only the state history, kept current while fetches come.
const T = suite('store state mirror');
let repo: TempRepo;
T.before.each(() => { repo = makeRepo('svc-mirror-'); });
T.after.each(() => repo.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const commitState = (msg: string) => {
  let parent = '';
  try { parent = repo.git('rev-parse', '--verify', '-q', 'refs/sdd/state'); } catch { /* first commit */ }
  const oid = repo.git('commit-tree', repo.git('mktree', '--missing'), ...(parent ? ['-p', parent] : []), '-m', msg);
  repo.git('update-ref', 'refs/sdd/state', oid);
  return oid;
};

T('a fetch brings the mirror up to the ref; commits are pushed in the background only while fetches come', async () => {
  const clock = manualClock();
  const mirror = createStateMirror({ git: createGit(repo.dir), gitCommonDir: join(repo.dir, '.git'), log: silentLogger(), now: clock.now, debounceMs: 10, warmMs: 60_000 });
  const inMirror = () => repo.git('--git-dir', mirror.gitdir, 'rev-parse', '--verify', '-q', 'refs/sdd/state');
  const first = commitState('one');
  mirror.nudge();
  await sleep(100);
  assert.not.ok(existsSync(mirror.gitdir), 'nobody fetched: no work');
  await mirror.current();
  assert.is(inMirror(), first);
  assert.is(repo.git('--git-dir', mirror.gitdir, 'for-each-ref', '--format=%(refname)'), 'refs/sdd/state');
  assert.is.not(repo.git('--git-dir', mirror.gitdir, 'cat-file', '-t', first), '');
  const code = repo.git('rev-parse', 'HEAD');
  assert.throws(() => repo.git('--git-dir', mirror.gitdir, 'cat-file', '-e', code), undefined, 'no code commit in the mirror');
  const second = commitState('two');
  mirror.nudge();
  // Pushed in the background: poll (bounded) rather than guess how long a push takes on a loaded machine.
  for (const end = Date.now() + 15_000; inMirror() !== second && Date.now() < end;) await sleep(20);
  assert.is(inMirror(), second, 'a fetch came recently: pushed after the commit');
  clock.advance(120_000);
  const third = commitState('three');
  mirror.nudge();
  await sleep(300);
  assert.is(inMirror(), second, 'no fetch for a while: left for the next fetch');
  await mirror.current();
  assert.is(inMirror(), third);
  // Packed (the loose file gone, as after `git pack-refs`): git is asked, the mirror still follows.
  const fourth = commitState('four');
  repo.git('pack-refs', '--all');
  assert.not.ok(existsSync(join(repo.dir, '.git', 'refs', 'sdd', 'state')), 'packed');
  await mirror.current();
  assert.is(inMirror(), fourth);
  mirror.close();
});

T.run();
