import { mkdirSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTenantGate } from '../../src/auth/index.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createAuditLog } from '../../src/observe/index.ts';
import { createCommitter, createGit, createRecordStore, sddLayout } from '../../src/store/index.ts';
import { openTasks } from '../../src/tasks/index.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { runCli } from '../helpers/server.ts';
import { openHistory } from '../../src/state/history.ts';

// A board with a known history (fixed clock, fixed ids, real task service, store, audit and committer),
// read back offline by `svc state log|show|diff` with no server running.
const T = suite('svc state log|show|diff');
let repo: TempRepo;
const A = 't0000000000000000000000001';
const B = 't0000000000000000000000002';
const HOUR = 3_600_000;

T.before(async () => { try { await build(); } catch (e) { console.error(e); throw e; } });
async function build() {
  repo = makeRepo('svc-history-');
  const layout = sddLayout(repo.dir);
  mkdirSync(layout.sdd, { recursive: true });
  const clock = manualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const log = silentLogger();
  const committer = createCommitter({ layout, git: createGit(repo.dir), log, clock, intervalMs: 60_000, gcEveryCommits: 0 });
  const audit = createAuditLog({ layout, clock, log, onAppend: (abs) => committer.touch(abs) });
  const store = createRecordStore({ layout, committer, log, audit });
  // Fixed ids: t0000000000000000000000001, …
  let n = 0;
  const ids = { next: () => `t${String(++n).padStart(25, '0')}` };
  const { tasks } = await openTasks({ layout, store, clock, ids, log, tenants: createTenantGate({ layout, log, defaultMax: 100 }), config: defaultConfig() });
  const alice = { actor: 'alice', tenant: 'default' };
  const bob = { actor: 'bob', tenant: 'default' };
  await tasks.create({ title: 'Add a health check', role: 'backend' } as never, alice);
  await tasks.create({ title: 'Fix "login"', role: 'backend' } as never, alice);
  await committer.flush();
  clock.advance(HOUR);
  await tasks.claim(B, { claimed_by_session: 'backend-3f2a' }, bob);
  await committer.flush();
  clock.advance(HOUR);
  for (const message of ['reading', 'half way', 'tests pass']) await tasks.reportProgress(B, { message } as never, bob);
  await committer.flush();
  clock.advance(HOUR);
  await tasks.complete(B, { result_summary: 'fixed' }, bob);
  await tasks.patch(A, { priority: 1 }, alice);
  await committer.flush();
  await audit.close();
  await store.close();
}
T.after(() => repo?.cleanup());

const svcState = async (...args: string[]) => {
  const r = await runCli(['state', ...args], { cwd: repo.dir, env: { TZ: 'UTC' } });
  assert.is(r.code, 0, `svc state ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const rejects = async (p: Promise<unknown>, re: RegExp) => {
  const err = await p.then(() => undefined, (e: Error) => e);
  assert.ok(err, 'expected a rejection');
  assert.match(err!.message, re);
};
const revs = () => repo.git('log', '--format=%H', 'refs/sdd/state').split('\n').map((h) => h.slice(0, 10));

T('the commit messages name the changes with titles and actors', () => {
  const log = repo.git('log', '--format=%B%x00', 'refs/sdd/state').split('\0').map((m) => m.trim());
  assert.equal(log.slice(0, 4), [
    `2 changes: complete "Fix \\"login\\"" (${B}); patch "Add a health check" (${A})\n\nSvc-Actor: bob\nSvc-Actor: alice`,
    `4 changes: start "Fix \\"login\\"" (${B}); progress ×3\n\nSvc-Actor: bob`,
    `claim "Fix \\"login\\"" (${B}) by backend-3f2a\n\nSvc-Actor: bob`,
    `2 changes: create "Add a health check" (${A}); create "Fix \\"login\\"" (${B})\n\nSvc-Actor: alice`,
  ]);
});

T('svc state log prints the history as a stable table: time, actor, change, task, title', async () => {
  const [c4, c3, c2, c1] = revs();
  const expected = [
    'TIME                  REV         ACTOR  CHANGE    TASK                        TITLE               DETAIL',
    `2026-01-01T03:00:00Z  ${c4}  alice  patch     ${A}  Add a health check  priority`,
    `2026-01-01T03:00:00Z  ${c4}  bob    complete  ${B}  Fix "login"         in_progress → done`,
    `2026-01-01T02:00:00Z  ${c3}  bob    progress  ${B}  Fix "login"         ×3`,
    `2026-01-01T02:00:00Z  ${c3}  bob    start     ${B}  Fix "login"         claimed → in_progress`,
    `2026-01-01T01:00:00Z  ${c2}  bob    claim     ${B}  Fix "login"         open → claimed`,
    `2026-01-01T00:00:00Z  ${c1}  alice  create    ${A}  Add a health check  open`,
    `2026-01-01T00:00:00Z  ${c1}  alice  create    ${B}  Fix "login"         open`,
  ].join('\n') + '\n';
  assert.is(await svcState('log'), expected);
  const h = openHistory(repo.dir);
  try {
    assert.equal((await h.log({ limit: 50 })).map((r) => r.change), ['patch', 'complete', 'progress', 'start', 'claim', 'create', 'create'], 'the same rows in-process');
    assert.is((await h.log({ limit: 2 })).length, 2);
    assert.equal((await h.log({ since: '2026-01-01T01:30:00Z', limit: 50 })).map((r) => r.change), ['patch', 'complete', 'progress', 'start']);
  } finally {
    h.close();
  }
});

T('svc state log --task --json parses and names only that task', async () => {
  const rows = JSON.parse(await svcState('log', '--task', A, '--json'));
  assert.equal(rows.map((r: any) => [r.change, r.actor, r.title, r.detail]), [['patch', 'alice', 'Add a health check', 'priority'], ['create', 'alice', 'Add a health check', 'open']]);
  assert.equal(Object.keys(rows[0]).sort(), ['actor', 'change', 'detail', 'rev', 'task_id', 'time', 'title']);
});

T('svc state show: the board (or one task) at a revision or a time', async () => {
  const then = JSON.parse(await svcState('show', '@{2026-01-01T01:30:00Z}', '--json'));
  assert.is(then.time, '2026-01-01T01:00:00Z');
  assert.equal(then.tasks.map((t: any) => [t.id, t.status, t.version]), [[A, 'open', 1], [B, 'claimed', 2]]);
  const h = openHistory(repo.dir);
  try {
    const tip = await h.resolve();
    assert.is(tip.time, '2026-01-01T03:00:00Z');
    assert.equal([...(await h.board(tip)).values()].map((t) => t.status).sort(), ['done', 'open']);
    const task = await h.task(await h.resolve('~3'), B);
    assert.is(task?.status, 'open');
    assert.is(task?.title, 'Fix "login"');
    assert.is((await h.resolve('@{1}')).oid, (await h.resolve('~1')).oid);
    await rejects(h.resolve('@{2025-01-01T00:00:00Z}'), /no state commit at or before/);
    await rejects(h.resolve('--all'), /not a revision/);
  } finally {
    h.close();
  }
});

T('svc state diff names the tasks added, removed and changed with the fields that changed', async () => {
  const text = await svcState('diff', '~3', '~1');
  assert.match(text, /: 0 added, 0 removed, 1 changed\n/);
  assert.match(text, `changed  ${B}  "Fix \\"login\\""\n`);
  assert.match(text, '    status: "open" → "in_progress"');
  const h = openHistory(repo.dir);
  try {
    const d = await h.diff(await h.resolve('~3'), await h.resolve());
    assert.equal(d.changed.map((c) => c.id), [A, B]);
    assert.equal(d.changed[0]!.fields.priority!.to, 1);
    assert.equal(d.changed[1]!.fields.status, { from: 'open', to: 'done' });
  } finally {
    h.close();
  }
  const unknown = await runCli(['state', 'diff', 'nope'], { cwd: repo.dir });
  assert.is(unknown.code, 3);
  assert.is(unknown.stderr, 'svc state diff: unknown revision: nope\n', 'words, no stack trace');
});

T('a clone without the ref is told how to get it', async () => {
  const other = makeRepo('svc-history-empty-');
  try {
    const r = await runCli(['state', 'log'], { cwd: other.dir });
    assert.is(r.code, 3);
    assert.match(r.stderr, /no refs\/sdd\/state in .*: fetch it first \(git fetch <url> refs\/sdd\/state:refs\/sdd\/state\)/);
  } finally {
    other.cleanup();
  }
});

T.run();
