// A state commit that changes many entries of one folder builds that folder's tree itself (big-folder.ts)
// instead of fast-import's linear insert: the same commits through a writer that always builds it and one
// that never does give the same trees, step after step (adds, changes, deletes, a nested folder, a folder
// emptied), a commit through fast-import alone on top of such a tree works, and git finds the objects sound.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { bigFolders, treeObject, writeLooseObject } from '../../src/store/big-folder.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createStateWriter, type StateWriter } from '../../src/store/state-writer.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const T = suite('state commits: a folder with many changes');
let repos: TempRepo[] = [];
T.after.each(() => { for (const r of repos) r.cleanup(); repos = []; });

// Two repositories fed the same files: `built` builds a folder's tree from 5 changes on, `plain` never.
function pair() {
  const make = (bigFolderChanges: number) => {
    const repo = makeRepo('svc-big-folder-');
    repos.push(repo);
    const writer = createStateWriter({ layout: sddLayout(repo.dir), git: createGit(repo.dir), log: silentLogger(), clock: systemClock, bigFolderChanges });
    return { repo, writer };
  };
  const sides = [make(5), make(Number.POSITIVE_INFINITY)];
  const git = (repo: TempRepo, ...args: string[]) => execFileSync('git', args, { cwd: repo.dir, encoding: 'utf8' }).trim();
  return {
    /** Write (text) or delete (null) files under `.sdd` on both sides, commit them, and return both `.sdd` tree ids. */
    async step(files: Record<string, string | null>): Promise<[string, string]> {
      const out: string[] = [];
      for (const { repo, writer } of sides) {
        for (const [rel, text] of Object.entries(files)) {
          const abs = join(repo.dir, '.sdd', rel);
          if (text === null) rmSync(abs, { force: true });
          else { mkdirSync(dirname(abs), { recursive: true }); writeFileSync(abs, text); }
        }
        await commit(writer, Object.keys(files));
        out.push(git(repo, 'rev-parse', 'refs/sdd/state:.sdd'));
      }
      return out as [string, string];
    },
    built: sides[0]!.repo,
    git,
    close: () => Promise.all(sides.map((s) => s.writer.recycle())),
  };
}
const commit = (w: StateWriter, paths: string[]) => w.commit({ paths: [...paths].sort(), notes: ['test'] });
const record = (i: number, v = 1) => `{\n  "task_id": "t${String(i).padStart(5, '0')}",\n  "version": ${v}\n}\n`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
const records = (ids: number[], v = 1) => Object.fromEntries(ids.map((i) => [`eu_ai_act/t${String(i).padStart(5, '0')}.json`, record(i, v)]));

T('adds, changes and deletes in a flat folder, a nested folder, an emptied one: the same trees as fast-import alone', async () => {
  const p = pair();
  try {
    // First commit of the board: 40 records, two task files elsewhere, a nested folder of 6.
    let [a, b] = await p.step({ ...records(range(0, 40)), 'tasks/ab/x.json': '{}\n', 'tasks/cd/y.json': '{}\n', ...Object.fromEntries(range(0, 6).map((i) => [`eu_ai_act/sub/n${i}.json`, `${i}\n`])) });
    assert.is(a, b, 'first commit');
    assert.is(p.git(p.built, 'ls-tree', '-r', '--name-only', 'refs/sdd/state', '--', '.sdd/eu_ai_act').split('\n').length, 46);
    // 10 changed, 10 deleted, 20 added, beside a change in another folder and in the nested one.
    [a, b] = await p.step({ ...records(range(0, 10), 2), ...Object.fromEntries(range(10, 20).map((i) => [`eu_ai_act/t${String(i).padStart(5, '0')}.json`, null])), ...records(range(40, 60)), 'tasks/ab/x.json': '{"v":2}\n', 'eu_ai_act/sub/n0.json': 'changed\n' });
    assert.is(a, b, 'changes, deletes and adds');
    assert.is(p.git(p.built, 'show', 'refs/sdd/state:.sdd/eu_ai_act/t00003.json'), record(3, 2).trim());
    assert.is(p.git(p.built, 'show', 'refs/sdd/state:.sdd/eu_ai_act/sub/n0.json'), 'changed');
    assert.is(p.git(p.built, 'ls-tree', 'refs/sdd/state', '--', '.sdd/eu_ai_act/t00012.json'), '', 'deleted');
    // A small change on top of a tree built here goes through fast-import's own insert.
    [a, b] = await p.step({ 'eu_ai_act/t00001.json': record(1, 3) });
    assert.is(a, b, 'one change through fast-import, on a tree built outside it');
    // The nested folder alone with many changes (its parent folder has few).
    [a, b] = await p.step(Object.fromEntries(range(6, 12).map((i) => [`eu_ai_act/sub/n${i}.json`, `${i}\n`])));
    assert.is(a, b, 'a nested folder');
    // Every record deleted: the folder goes (the nested one stays).
    [a, b] = await p.step(Object.fromEntries([...range(0, 10), ...range(20, 60)].map((i) => [`eu_ai_act/t${String(i).padStart(5, '0')}.json`, null])));
    assert.is(a, b, 'records deleted');
    assert.equal(p.git(p.built, 'ls-tree', '--name-only', 'refs/sdd/state:.sdd/eu_ai_act').split('\n'), ['sub']);
    [a, b] = await p.step(Object.fromEntries(range(0, 12).map((i) => [`eu_ai_act/sub/n${i}.json`, null])));
    assert.is(a, b, 'a folder emptied');
    assert.not.match(p.git(p.built, 'ls-tree', '--name-only', 'refs/sdd/state:.sdd'), 'eu_ai_act');
    // Every object the commits name is there and well formed (zero-padded modes, order, missing blobs).
    assert.is(p.git(p.built, 'fsck', '--strict', '--no-dangling', '--no-progress'), '');
  } finally {
    await p.close();
  }
});

T('the tree as git writes it: the listing merged with the changes in git\'s order (a folder sorts as if it ended with /), the same id as git mktree', async () => {
  const repo = makeRepo('svc-big-folder-tree-');
  repos.push(repo);
  const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo.dir, input, encoding: 'utf8' }).trim();
  const blob = (text: string) => git(['hash-object', '-w', '--stdin'], text);
  const sub = git(['mktree'], `100644 blob ${blob('x')}\tx\n`);
  // The folder before: its tree object's body, as git wrote it.
  const body = (entries: string[]) => execFileSync('git', ['cat-file', 'tree', git(['mktree'], entries.join('\n') + '\n')], { cwd: repo.dir });
  const before = body([`100644 blob ${blob('1')}\ta-b`, `040000 tree ${sub}\ta`, `100644 blob ${blob('2')}\ta.c`, `100644 blob ${blob('5')}\té`]);
  const changes = new Map([['a.c', null], ['a0', blob('3')], ['a-b', blob('4')], ['\uFF21', blob('6')], ['\u{1F600}', blob('7')]]);
  const tree = treeObject(before, changes)!;
  const expected = [`100644 blob ${blob('4')}\ta-b`, `040000 tree ${sub}\ta`, `100644 blob ${blob('3')}\ta0`, `100644 blob ${blob('5')}\té`, `100644 blob ${blob('6')}\t\uFF21`, `100644 blob ${blob('7')}\t\u{1F600}`];
  assert.is(tree.oid, git(['mktree'], expected.join('\n') + '\n'), "'a-b' < 'a/' < 'a0' < 'é' < 'Ａ' < '😀' (UTF-8 bytes, not UTF-16 units), a.c deleted");
  const objects = join(repo.dir, '.git', 'objects');
  await writeLooseObject(objects, tree.oid, tree.bytes);
  await writeLooseObject(objects, tree.oid, tree.bytes); // written again: the same object, no error
  assert.is(git(['cat-file', '-t', tree.oid]), 'tree');
  assert.is(git(['fsck', '--strict', '--no-dangling', '--no-progress']), '');
  assert.is(treeObject(body([`100644 blob ${blob('1')}\tx`]), new Map([['x', null]])), null, 'nothing left: no tree');
  // A file changed where a folder of that name was: the file replaces the folder (as fast-import does).
  assert.is(treeObject(before, new Map([['a', blob('8')]]))!.oid, git(['mktree'], [`100644 blob ${blob('1')}\ta-b`, `100644 blob ${blob('8')}\ta`, `100644 blob ${blob('2')}\ta.c`, `100644 blob ${blob('5')}\té`].join('\n') + '\n'));
  assert.equal([...bigFolders(['a/b/1', 'a/b/2', 'a/1', 'a/2', 'c/1'], 2).keys()], ['a', 'a/b'], 'outer folders first, small ones left to fast-import');
});

T.run();
