// The board's snapshot through real `svc up` restarts: a clean stop writes it and the next start loads the
// board from it (the same tasks, versions and ready queue) and removes it; a task file edited by hand while
// the server was down is read from its file; a torn snapshot is ignored with a log line; after a crash none
// is left, and one put back from before is trusted only for the files that still match it.
import { copyFileSync, existsSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const T = suite('tasks: the board snapshot across restarts');
let repo: TempRepo;
// The servers a test started: killed after it, so a failed assertion leaves no child running.
let servers: RunningServer[] = [];
const up = async () => { const s = await startServer(repo.dir); servers.push(s); return s; };
T.before.each(() => { repo = makeRepo('svc-board-snapshot-'); servers = []; });
T.after.each(async () => {
  for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill();
  repo.cleanup();
});

// Every task as the API shows it, by id: what must be the same after a restart.
async function board(s: RunningServer): Promise<Map<string, { status: string; version: number; title: string }>> {
  const r = await s.api('GET', '/tasks');
  assert.is(r.status, 200, JSON.stringify(r.body));
  const items = r.body as { id: string; status: string; version: number; title: string }[];
  return new Map(items.map((t) => [t.id, { status: t.status, version: t.version, title: t.title }]));
}
const fromSnapshot = (s: RunningServer): number | null => {
  const m = /loaded (\d+) task\(s\)(?: \((\d+) from the board snapshot\))?/.exec(s.output());
  assert.ok(m, s.output());
  return m![2] === undefined ? null : Number(m![2]);
};

T('a clean stop leaves a snapshot the next start loads (same tasks, versions, ready queue); a hand edit made while down is seen; a torn snapshot is ignored', async () => {
  const layout = sddLayout(repo.dir);
  let s = await up();
  const ids: string[] = [];
  for (const title of ['first', 'second', 'third']) ids.push((await s.api('POST', '/tasks', { title, role: 'qa' })).body.id);
  const claimed = await s.api('GET', '/tasks/next/qa');
  assert.is(claimed.body.id, ids[0]);
  assert.is((await s.api('POST', `/tasks/${ids[0]}/complete`, { result_summary: 'ok' })).status, 200);
  const before = await board(s);
  assert.is(fromSnapshot(s), null, 'a first start has none');
  assert.is(await s.stop(), 0);
  assert.ok(existsSync(layout.boardSnapshot), 'written at the clean stop');

  s = await up();
  assert.is(fromSnapshot(s), 3);
  assert.not.match(s.output(), /loaded again/, 'nothing changed (tasks/.keep is no task): one load');
  assert.equal(await board(s), before);
  assert.not.ok(existsSync(layout.boardSnapshot), 'removed once loaded');
  assert.is((await s.api('GET', '/tasks/next/qa')).body.id, ids[1], 'the ready queue as before');
  const after = await board(s);
  assert.is(await s.stop(), 0);

  // Edited by hand while down: same size, mtime put back. Its ctime moved, so it is read from its file.
  const file = layout.task(ids[2]!);
  const old = statSync(file);
  writeFileSync(file, readFileSync(file, 'utf8').replace('"third"', '"THIRD"'));
  utimesSync(file, old.atime, old.mtime);
  assert.is(statSync(file).size, old.size);
  s = await up();
  assert.is(fromSnapshot(s), 2);
  assert.match(s.output(), /board snapshot: 1 task\(s\) changed or gone since the stop, 1 read from their files; the board is loaded again/);
  assert.equal(await board(s), new Map([...after, [ids[2]!, { ...after.get(ids[2]!)!, title: 'THIRD' }]]));
  assert.is(await s.stop(), 0);

  // Torn: ignored with its reason, every file read.
  truncateSync(layout.boardSnapshot, statSync(layout.boardSnapshot).size - 10);
  s = await up();
  assert.is(fromSnapshot(s), null);
  assert.match(s.output(), /board snapshot not used \([^)]*torn\)/);
  assert.is((await board(s)).get(ids[2]!)?.title, 'THIRD');
  assert.is((await board(s)).size, 3);
  assert.not.ok(existsSync(layout.boardSnapshot), 'the torn one is removed too');
  await s.stop();
});

T('after a crash no snapshot is trusted: none is left, and one put back from before vouches only for unchanged files', async () => {
  const layout = sddLayout(repo.dir);
  let s = await up();
  const a = (await s.api('POST', '/tasks', { title: 'a', role: 'qa' })).body.id as string;
  const b = (await s.api('POST', '/tasks', { title: 'b', role: 'qa' })).body.id as string;
  assert.is(await s.stop(), 0);
  const kept = join(repo.dir, 'old.snapshot');
  copyFileSync(layout.boardSnapshot, kept);

  s = await up();
  assert.is(fromSnapshot(s), 2);
  assert.is((await s.api('GET', '/tasks/next/qa')).body.id, a);
  await s.settled();
  await s.kill();
  assert.not.ok(existsSync(layout.boardSnapshot), 'a crash leaves none: the start removed it');

  s = await up();
  assert.is(fromSnapshot(s), null);
  assert.is((await board(s)).get(a)?.status, 'claimed');
  await s.settled();
  await s.kill();

  // A snapshot from before the claim, as if a crash had left it: a's file no longer matches it.
  copyFileSync(kept, layout.boardSnapshot);
  s = await up();
  assert.is(fromSnapshot(s), 1, 'b only');
  const now = await board(s);
  assert.equal(now.get(a), { status: 'claimed', version: 2, title: 'a' });
  assert.equal(now.get(b), { status: 'open', version: 1, title: 'b' });
  await s.stop();
});

T.run();
