import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createCommitter } from '../../src/store/committer.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout, shardedRel } from '../../src/store/layout.ts';
import { unchangedSince } from '../../src/store/clean-stop.ts';
import { scanSdd } from '../../src/store/recover.ts';
import { parseLsTree, restoreFromRef } from '../../src/store/restore.ts';
import { scanEarly } from '../../src/store/start-early.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const here = dirname(fileURLToPath(import.meta.url));
const recover = suite('store recover');
let repo: TempRepo;
recover.before.each(() => {
  repo = makeRepo('svc-recover-');
});
recover.after.each(() => repo.cleanup());

const tree = () => repo.git('ls-tree', '-r', '--name-only', 'refs/sdd/state').split('\n').filter(Boolean);
const newCommitter = () =>
  createCommitter({ layout: sddLayout(repo.dir), git: createGit(repo.dir), log: silentLogger(), clock: manualClock(), intervalMs: 60_000, gcEveryCommits: 0 });

// The ref's tree as path → blob id, next to the files on disk hashed by git itself.
const refBlobs = () => new Map(repo.git('ls-tree', '-r', 'refs/sdd/state').split('\n').filter(Boolean).map((l) => {
  const [meta, path] = l.split('\t');
  return [path!.slice(5), meta!.split(' ')[2]!] as const;
}));
const diskBlobs = async () => {
  const paths = [...(await scanSdd(sddLayout(repo.dir))).keys()].sort();
  const oids = repo.git('hash-object', '--no-filters', ...paths.map((p) => join(repo.dir, '.sdd', p))).split('\n');
  return new Map(paths.map((p, i) => [p, oids[i]!] as const));
};

// Run the writer until `killAfter` acks past a flush, SIGKILL it, return its stdout lines.
function runWriterAndKill(killAfter: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'writer.ts'), repo.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const acks = out.match(/^ack (\d+) /gm) ?? [];
      const last = Number(acks.at(-1)?.split(' ')[1] ?? 0);
      if (last >= killAfter && last % 7 === 3) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer ended without SIGKILL: ${out}`));
      else resolve(out.split('\n').filter(Boolean));
    });
  });
}

recover('after SIGKILL, recover() commits exactly the acknowledged-but-uncommitted writes; the ref equals the files', async () => {
  const lines = await runWriterAndKill(30);
  const acks = lines.filter((l) => l.startsWith('ack ')).map((l) => l.split(' ')).map(([, i, id, v]) => ({ i: Number(i), id: id!, version: Number(v) }));
  const lastFlush = Math.max(...lines.filter((l) => l.startsWith('flushed ')).map((l) => Number(l.split(' ')[1])));
  const lastAck = acks.at(-1)!.i;
  const layout = sddLayout(repo.dir);
  for (const a of acks) {
    const onDisk = JSON.parse(readFileSync(layout.task(a.id), 'utf8')) as { version: number };
    assert.ok(onDisk.version >= a.version, `acknowledged ${a.id} v${a.version} is on disk`);
  }
  // Writes after the last commit: the acknowledged ones must be committed, plus at most the one in flight.
  const idOf = (i: number) => `t${String(i % 10).padStart(4, '0')}`;
  const mustIds = new Set(acks.filter((a) => a.i > lastFlush).map((a) => a.id));
  const mayIds = new Set([...mustIds, idOf(lastAck + 1)]);
  const before = repo.git('rev-parse', 'refs/sdd/state');

  const c = newCommitter();
  const r = (await c.recover()).commit;
  assert.ok(r, 'a recover commit was made');
  assert.match(r!.message, /^recover: committed \d+ \(/);
  const changed = repo.git('diff', '--name-only', before, 'refs/sdd/state').split('\n').filter(Boolean);
  const changedTasks = new Set(changed.filter((p) => p.startsWith('.sdd/tasks/')).map((p) => p.split('/').pop()!.replace('.json', '')));
  for (const id of mustIds) assert.ok(changedTasks.has(id), `${id} acknowledged after the last commit is recovered`);
  for (const p of changed) {
    const id = p.split('/').pop()!.replace(/\.jsonl?$/, '');
    assert.ok(mayIds.has(id), `${p} changed only after the last commit`);
  }
  assert.equal(refBlobs(), await diskBlobs());
  assert.is((await c.recover()).commit, null, 'a second recover finds nothing');
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

recover('the first start is the first commit of the board; later hand edits are committed, a file deleted by hand stays in the ref', async () => {
  const layout = sddLayout(repo.dir);
  const c = newCommitter();
  assert.is((await c.recover()).commit, null, 'empty tree, nothing to do');
  for (const id of ['a1', 'b2', 'c3']) {
    const abs = join(layout.sdd, shardedRel('tasks', id, '.json'));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, `{"id":"${id}"}\n`);
  }
  writeFileSync(layout.config, 'a: 1\n');
  const first = await c.recover();
  assert.is(first.commit?.message, 'first commit of the board (4 paths)');
  assert.ok(first.report.first);
  rmSync(join(layout.sdd, 'tasks', 'b2'), { recursive: true });
  writeFileSync(layout.task('a1'), '{"id":"a1","edited":true}\n');
  const second = await newCommitter().recover();
  assert.is(second.commit?.message, 'recover: committed 1 (tasks/a1/a1.json)');
  assert.ok(tree().includes('.sdd/tasks/b2/b2.json'), 'the deleted file is not deleted from the ref');
  assert.is(repo.git('diff', '--name-only', '--diff-filter=D', 'refs/sdd/state~1', 'refs/sdd/state'), '');
  // A delete the journal recorded (a command removed the file) is committed.
  const third = await newCommitter().recover({ deletions: new Set(['tasks/b2/b2.json']) });
  assert.is(third.commit?.message, 'recover: committed 0, deleted 1 (tasks/b2/b2.json)');
  assert.equal(refBlobs(), await diskBlobs());
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

recover('restoreFromRef writes back exactly the missing committed files, byte for byte, and never replaces one on disk', async () => {
  const layout = sddLayout(repo.dir);
  for (const id of ['a1', 'b2', 'c3']) {
    const abs = layout.task(id);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, `{"id":"${id}","t":"é\\u0000"}\n`);
  }
  writeFileSync(layout.config, 'team: true\n');
  mkdirSync(layout.runtime, { recursive: true });
  writeFileSync(join(layout.runtime, 'server.json'), '{}');
  await newCommitter().recover();
  const committed = refBlobs();
  rmSync(layout.tasksDir, { recursive: true });
  rmSync(layout.config);
  mkdirSync(dirname(layout.task('a1')), { recursive: true });
  writeFileSync(layout.task('a1'), 'local edit\n');
  const r = restoreFromRef(layout, { skip: new Set(['tasks/b2/b2.json']) });
  assert.equal(r.paths.sort(), ['config.yaml', 'tasks/c3/c3.json']);
  assert.is(r.tasks, 1);
  assert.not.ok(r.diskHadNoTasks, 'a1 was on disk');
  assert.is(readFileSync(layout.task('a1'), 'utf8'), 'local edit\n', 'a file on disk is never replaced');
  assert.not.ok(existsSync(layout.task('b2')), 'a skipped path (journaled delete) stays deleted');
  assert.is(readFileSync(layout.config, 'utf8'), 'team: true\n');
  const disk = await diskBlobs();
  assert.is(disk.get('tasks/c3/c3.json'), committed.get('tasks/c3/c3.json'));
  assert.is(restoreFromRef(layout).paths.join(), 'tasks/b2/b2.json');
  assert.not.ok(readdirSync(dirname(layout.task('c3'))).some((n) => n.endsWith('.tmp')), 'no temp file left');
  // A restore killed before its link left a temp file an hour ago: the next restore removes it; a fresh one stays.
  const temps = join(layout.runtime, 'restore');
  writeFileSync(join(temps, 'c3.json.1234.tmp'), 'half');
  utimesSync(join(temps, 'c3.json.1234.tmp'), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  writeFileSync(join(temps, 'c3.json.5678.tmp'), 'being written');
  restoreFromRef(layout);
  assert.equal(readdirSync(temps), ['c3.json.5678.tmp']);
});

recover('one ls-tree parser for restore and recover: regular files under .sdd only, with or without sizes', () => {
  const a = 'a'.repeat(40), b = 'b'.repeat(40), c = 'c'.repeat(64);
  const long = [`100644 blob ${a}     123\t.sdd/tasks/01/t1.json`, `120000 blob ${b}      9\t.sdd/link`, `100755 blob ${b}   4567\t.sdd/x y.json`, `100644 blob ${a}      1\tREADME.md`, ''].join('\0');
  assert.equal([...parseLsTree(long)], [['tasks/01/t1.json', { oid: a, size: 123 }], ['x y.json', { oid: b, size: 4567 }]]);
  const short = parseLsTree([`100644 blob ${c}\t.sdd/config.yaml`, `040000 tree ${a}\t.sdd/tasks`].join('\0'));
  assert.equal([...short.keys()], ['config.yaml']);
  assert.is(short.get('config.yaml')!.oid, c, 'a sha256 id is read whole');
  assert.ok(Number.isNaN(short.get('config.yaml')!.size), 'no size without -l');
  // With -t (and -l: a folder's size column is '-'), the folders' tree ids when asked for.
  const trees = new Map<string, string>();
  const withTrees = parseLsTree([`040000 tree ${b}       -\t.sdd/tasks`, `040000 tree ${c}       -\t.sdd/tasks/01`, `100644 blob ${a}     123\t.sdd/tasks/01/t1.json`, `040000 tree ${a}       -\tsrc`].join('\0'), trees);
  assert.equal([...withTrees.keys()], ['tasks/01/t1.json']);
  assert.equal([...trees], [['tasks', b], ['tasks/01', c]]);
});

recover('a clean stop vouches for a file only while its size, mtime and ctime say it is untouched, and not near the stop', () => {
  const blob = { oid: 'a'.repeat(40), size: 10 };
  const clean = { head: 'h', at: 100_000 };
  const st = (size: number, mtimeMs: number, ctimeMs = mtimeMs) => ({ size, mtimeMs, ctimeMs });
  assert.ok(unchangedSince(st(10, 50_000), blob, clean));
  assert.not.ok(unchangedSince(st(11, 50_000), blob, clean), 'another size');
  assert.not.ok(unchangedSince(st(10, 50_000, 100_500), blob, clean), 'changed after the stop (ctime: an mtime put back)');
  assert.not.ok(unchangedSince(st(10, 99_000), blob, clean), 'written within 2 s of the stop: racy');
  assert.not.ok(unchangedSince(st(10, 50_000), undefined, clean), 'not in the ref');
  assert.not.ok(unchangedSince(st(10, 50_000), blob, null), 'no clean stop');
});

recover('after a clean stop the next start takes unchanged files from the ref by a stat, and still commits an edit made while it was down', async () => {
  const layout = sddLayout(repo.dir);
  const c = newCommitter();
  await c.recover();
  const a = join(layout.sdd, shardedRel('tasks', 'a1', '.json'));
  mkdirSync(dirname(a), { recursive: true });
  writeFileSync(a, '{"id":"a1"}\n');
  c.touch(a, 'create a1');
  await c.stop();
  const head = repo.git('rev-parse', 'refs/sdd/state');
  assert.equal(JSON.parse(readFileSync(layout.stateClean, 'utf8')), { head }, 'the stop names the head it left');
  // What a start reads: with a clean stop later than the file, the ref's blob id without opening it.
  const old = statSync(a);
  const later = { head, at: old.mtimeMs + 10_000 };
  const fake = { oid: 'f'.repeat(40), size: old.size };
  assert.is((await scanSdd(layout, { ref: new Map([['tasks/a1/a1.json', fake]]), clean: later })).get('tasks/a1/a1.json'), fake.oid, 'vouched for, not read');
  assert.is((await scanSdd(layout, { ref: new Map([['tasks/a1/a1.json', fake]]), clean: null })).get('tasks/a1/a1.json'), refBlobs().get('tasks/a1/a1.json'), 'without a clean stop: read');
  // Edited while down, same size, mtime put back: the ctime gives it away.
  writeFileSync(a, '{"id":"b2"}\n');
  utimesSync(a, old.atime, old.mtime);
  const r = await newCommitter().recover();
  assert.is(r.commit?.message, 'recover: committed 1 (tasks/a1/a1.json)');
  assert.equal(refBlobs(), await diskBlobs());
});

// Four tasks and their EU AI Act records committed, then while down: b2 deleted by hand, a1 edited, d4 removed
// by a journaled delete; the same for the records e2, e1 and e4 (the scan thread of a large board compares that
// folder on a thread of its own).
async function crashScene() {
  const layout = sddLayout(repo.dir);
  for (const id of ['a1', 'b2', 'c3', 'd4']) {
    mkdirSync(dirname(layout.task(id)), { recursive: true });
    writeFileSync(layout.task(id), `{"id":"${id}"}\n`);
    mkdirSync(layout.euAiActDir, { recursive: true });
    writeFileSync(layout.euAiAct(`e${id[1]}`), `{"task":"${id}"}\n`);
  }
  await newCommitter().recover();
  rmSync(layout.task('b2'));
  writeFileSync(layout.task('a1'), '{"id":"a1","edited":true}\n');
  rmSync(layout.task('d4'));
  rmSync(layout.euAiAct('e2'));
  writeFileSync(layout.euAiAct('e1'), '{"task":"a1","edited":true}\n');
  rmSync(layout.euAiAct('e4'));
  return layout;
}
const DELETED = new Set(['tasks/d4/d4.json', 'eu_ai_act/e4.json']);

// A start after a crash: one task file deleted by hand (restored), one edited (committed), one a journaled
// delete removed (committed as deleted); the same on this thread and on the scan thread of a large board.
async function startAfterCrash(thread: boolean) {
  const layout = await crashScene();
  const events: string[] = [];
  const there = (abs: string) => (existsSync(abs) ? 'there' : 'missing');
  const r = await newCommitter().recover({ thread, restore: true, deletions: DELETED, onRestored: (paths) => events.push(`restored ${[...paths].sort().join(' ')}: b2 ${there(layout.task('b2'))}, e2 ${there(layout.euAiAct('e2'))}`) });
  events.push('done');
  assert.equal(events, ['restored eu_ai_act/e2.json tasks/b2/b2.json: b2 there, e2 there', 'done'], 'told once the files are there, before the answer');
  assert.is(readFileSync(layout.task('b2'), 'utf8'), '{"id":"b2"}\n');
  assert.is(readFileSync(layout.euAiAct('e2'), 'utf8'), '{"task":"b2"}\n');
  assert.not.ok(existsSync(layout.euAiAct('e4')), 'a journaled delete is not restored');
  assert.is(r.commit?.message, 'recover: restored 2, committed 2, deleted 2 (eu_ai_act/e1.json, eu_ai_act/e4.json, tasks/a1/a1.json, tasks/d4/d4.json)');
  assert.equal({ ...r.report, committed: [...r.report.committed], deleted: [...r.report.deleted].sort() }, { first: false, committed: ['eu_ai_act/e1.json', 'tasks/a1/a1.json'], deleted: ['eu_ai_act/e4.json', 'tasks/d4/d4.json'], restoredTasks: 1, restoredOther: 1, fetched: false });
  assert.equal(refBlobs(), await diskBlobs());
}

recover('a start after a crash restores, commits edits and journaled deletes (compared on this thread)', () => startAfterCrash(false));
recover('a start after a crash restores, commits edits and journaled deletes (compared on the scan thread of a large board)', () => startAfterCrash(true));

// `svc up` begins the comparison before its modules load (scanEarly): the restore is done by then, and the
// recover takes that comparison's answer when it asks the same (the journaled deletes it read, the ref's head).
recover('the comparison begun early restores before the recover runs, and the recover takes its answer', async () => {
  const layout = await crashScene();
  mkdirSync(layout.runtime, { recursive: true });
  writeFileSync(join(layout.runtime, 'journal-deletes.json'), JSON.stringify([...DELETED]));
  const early = await scanEarly(layout, createGit(repo.dir), { large: true });
  assert.ok(early, 'begun: nothing to replay');
  assert.equal([...await early.restored].sort(), ['eu_ai_act/e2.json', 'tasks/b2/b2.json']);
  assert.is(readFileSync(layout.task('b2'), 'utf8'), '{"id":"b2"}\n', 'restored before the recover runs');
  assert.not.ok(existsSync(layout.task('d4')), 'a journaled delete is not restored');
  const told: string[][] = [];
  const r = await newCommitter().recover({ early, restore: true, later: true, deletions: DELETED, snapshot: layout.boardSnapshot, onRestored: (paths) => told.push([...paths].sort()) });
  assert.equal(told, [['eu_ai_act/e2.json', 'tasks/b2/b2.json']]);
  assert.is(r.rest, null, 'after a crash nothing is left for after the start');
  assert.is(r.commit?.message, 'recover: restored 2, committed 2, deleted 2 (eu_ai_act/e1.json, eu_ai_act/e4.json, tasks/a1/a1.json, tasks/d4/d4.json)');
  assert.equal(refBlobs(), await diskBlobs());
});

// After a clean stop, `svc up` leaves a large board's EU AI Act folder (a third of a 100k start's CPU) for after
// the start: committer.finishStart() compares it, restores what is missing and commits what changed, before `compared`.
recover('after a clean stop, a large board\'s EU AI Act folder is compared by finishStart(), not before', async () => {
  const layout = sddLayout(repo.dir);
  for (const id of ['a1', 'b2']) {
    mkdirSync(dirname(layout.task(id)), { recursive: true });
    writeFileSync(layout.task(id), `{"id":"${id}"}\n`);
    mkdirSync(layout.euAiActDir, { recursive: true });
    writeFileSync(layout.euAiAct(`e${id[1]}`), `{"task":"${id}"}\n`);
  }
  const first = newCommitter();
  await first.recover();
  await first.stop(); // a clean stop
  rmSync(layout.euAiAct('e2'));
  writeFileSync(layout.euAiAct('e1'), '{"task":"a1","edited":true}\n');
  writeFileSync(layout.task('a1'), '{"id":"a1","edited":true}\n');
  const c = newCommitter();
  let compared = false;
  void c.compared.then(() => { compared = true; });
  const r = await c.recover({ thread: true, restore: true, later: true });
  assert.is(r.rest, 'eu_ai_act');
  assert.is(r.commit?.message, 'recover: committed 1 (tasks/a1/a1.json)', 'the task files are compared before the recover returns');
  c.start();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.not.ok(existsSync(layout.euAiAct('e2')), 'the folder waits for finishStart()');
  assert.not.ok(compared);
  c.finishStart();
  await c.compared;
  assert.is(readFileSync(layout.euAiAct('e2'), 'utf8'), '{"task":"b2"}\n', 'restored from the ref');
  assert.is(c.pending, 1, 'the edited record is marked for the next commit');
  await c.stop();
  assert.equal(refBlobs(), await diskBlobs(), 'committed by the stop');
  // That stop was clean too: the next start leaves the folder again; a journaled delete in it makes it compared now.
  assert.is((await newCommitter().recover({ thread: true, restore: true, later: true })).rest, 'eu_ai_act');
  assert.is((await newCommitter().recover({ thread: true, restore: true, later: true, deletions: new Set(['eu_ai_act/e9.json']) })).rest, null);
  assert.is((await newCommitter().recover({ thread: true, restore: true })).rest, null, 'only when asked');
});

recover('no comparison begins early while a journal holds changes to replay, nor on a small board', async () => {
  const layout = sddLayout(repo.dir);
  mkdirSync(dirname(layout.task('a1')), { recursive: true });
  writeFileSync(layout.task('a1'), '{"id":"a1"}\n');
  await newCommitter().recover();
  assert.is(await scanEarly(layout, createGit(repo.dir)), null, 'a small board compares on the recover\'s own thread');
  mkdirSync(layout.runtime, { recursive: true });
  writeFileSync(join(layout.runtime, 'journal.jsonl'), '{"t":{"tasks/a1/a1.json":{"id":"a1","x":1}}}\n');
  assert.is(await scanEarly(layout, createGit(repo.dir), { large: true }), null, 'the replay may change files first');
  rmSync(join(layout.runtime, 'journal.jsonl'));
  writeFileSync(join(layout.runtime, 'journal.0000000001.jsonl'), '');
  assert.is(await scanEarly(layout, createGit(repo.dir), { large: true }), null, 'a rotated journal too');
});

recover.run();
