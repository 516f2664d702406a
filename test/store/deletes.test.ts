// A committed path leaves refs/sdd/state only through the command that deletes it: its commit, or
// (after a crash in between) the first commit of the next start, from the journal. Never a restore.
import { existsSync, readdirSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createCommitter } from '../../src/store/committer.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { journalPaths } from '../../src/store/journal.ts';
import { dropJournalDeletes, replayJournal } from '../../src/store/journal-replay.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createOwnedStore } from '../../src/store/records/owned.ts';
import { restoreFromRef } from '../../src/store/restore.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const T = suite('store deletes reach the ref');
const log = silentLogger();
let repo: TempRepo;
T.before.each(() => { repo = makeRepo('svc-deletes-'); });
T.after.each(() => repo.cleanup());

const committerOf = () => createCommitter({ layout: sddLayout(repo.dir), git: createGit(repo.dir), log, clock: manualClock(), intervalMs: 60_000, gcEveryCommits: 0 });
const inRef = (rel: string) => repo.git('ls-tree', '-r', '--name-only', 'refs/sdd/state').split('\n').includes(`.sdd/${rel}`);
// Manual time for the checkpoint timer, real time for the IO it starts.
const until = async (timers: ReturnType<typeof manualTimers>, ok: () => boolean, what: string) => {
  for (const end = Date.now() + 10_000; !ok(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await timers.advance(100);
  }
};

T('a journal checkpoint commits a journaled delete before it drops the journal', async () => {
  const layout = sddLayout(repo.dir);
  const c = committerOf();
  const timers = manualTimers();
  const store = createOwnedStore({ layout, committer: c, log, timers, journal: { intervalMs: 30, syncFs: async () => undefined } });
  await store.create(layout.task('t1'), { version: 1 }, 'create t1');
  await until(timers, () => existsSync(layout.task('t1')), 'written behind');
  await c.flush();
  assert.ok(inRef('tasks/t1/t1.json'));
  await store.remove(layout.task('t1'), 'undo create t1');
  const paths = journalPaths(layout);
  // Gone means the current journal and every rotated one: a checkpoint drops rotated files after its settle.
  const journals = () => readdirSync(paths.dir).filter((n) => /^journal(\.\d+)?\.jsonl$/.test(n));
  await until(timers, () => !existsSync(layout.task('t1')) && journals().length === 0, 'checkpoint');
  assert.not.ok(inRef('tasks/t1/t1.json'), 'the delete is in the ref once its journal is gone');
  assert.is(repo.git('log', '-1', '--format=%s', 'refs/sdd/state'), 'undo create t1');
  await store.close();
});

T('a delete whose commit failed stays journaled; the next start commits it as a deletion instead of restoring the file', async () => {
  const layout = sddLayout(repo.dir);
  const c = committerOf();
  // The commit of the delete fails (disk trouble, or killed): its journal must stay.
  const failing = { touch: c.touch.bind(c), flush: async () => { throw new Error('disk full'); } };
  const store = createOwnedStore({ layout, committer: failing, log, timers: manualTimers(), journal: { intervalMs: 30, syncFs: async () => undefined } });
  await store.create(layout.task('t1'), { version: 1 }, 'create t1');
  await store.create(layout.task('t2'), { version: 1 }, 'create t2');
  await c.flush();
  await store.remove(layout.task('t1'), 'undo create t1');
  await store.close();
  assert.not.ok(existsSync(layout.task('t1')));
  assert.ok(inRef('tasks/t1/t1.json'), 'not committed yet');

  // The next start: replay, restore (skipping journaled deletes), recover.
  const deleted: string[] = [];
  await replayJournal(layout, log, async () => undefined, deleted);
  assert.equal(deleted, ['tasks/t1/t1.json']);
  assert.ok(existsSync(journalPaths(layout).deletes), 'kept until committed');
  assert.equal(restoreFromRef(layout, { skip: new Set(deleted) }).paths, []);
  // Killed again before the commit: the deletes file still says it.
  const again: string[] = [];
  await replayJournal(layout, log, async () => undefined, again);
  assert.equal(again, ['tasks/t1/t1.json']);
  const r = await committerOf().recover({ deletions: new Set(again) });
  assert.is(r.commit?.message, 'recover: committed 0, deleted 1 (tasks/t1/t1.json)');
  await dropJournalDeletes(layout);
  assert.not.ok(inRef('tasks/t1/t1.json'));
  assert.ok(inRef('tasks/t2/t2.json'));
  assert.not.ok(existsSync(journalPaths(layout).deletes));
});

T.run();
