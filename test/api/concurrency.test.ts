import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sddLayout } from '../../src/store/layout.ts';
import { assertError, boot, fileWhen, sleep, type Api } from './support.ts';

// Races and atomicity: exactly one claimer, long polls, all-or-nothing batches.
let a: Api;
const T = suite('claims under concurrency');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });

const tally = (codes: number[]) => codes.reduce<Record<number, number>>((m, c) => ({ ...m, [c]: (m[c] ?? 0) + 1 }), {});

T('next → exactly one winner of 32 concurrent clients (200), all others 404; repeated 50 times', async () => {
  for (let round = 0; round < 50; round++) {
    const t = await a.create({ role: 'race' });
    const res = await Promise.all(Array.from({ length: 32 }, (_, i) => a.s.api('GET', `/tasks/next/race?claimed_by_session=c${i}`)));
    const codes = res.map((r) => r.status);
    assert.equal(tally(codes), { 200: 1, 404: 31 }, `round ${round}`);
    const win = res.find((r) => r.status === 200)!;
    assert.is(win.body.id, t.id);
    // The file follows the acknowledgement within milliseconds; it must name the winner, never a loser.
    const onDisk = await fileWhen<{ status: string; claimed_by_session: string; version: number }>(sddLayout(a.repo.dir).task(t.id), (v) => v.version > 1);
    assert.is(onDisk.status, 'claimed');
    assert.is(onDisk.claimed_by_session, win.body.claimed_by_session, 'the file names the winner');
    assert.is(onDisk.version, 2, 'claimed once');
  }
});

T('claim → exactly one winner of 32 clients with the same expected_version (200), the others 409', async () => {
  for (let round = 0; round < 20; round++) {
    const t = await a.create({ role: 'cas' });
    const res = await Promise.all(Array.from({ length: 32 }, (_, i) =>
      a.s.api('POST', `/tasks/${t.id}/claim?expected_version=${t.version}&claimed_by_session=c${i}`)));
    assert.equal(tally(res.map((r) => r.status)), { 200: 1, 409: 31 }, `round ${round}`);
    for (const r of res.filter((x) => x.status === 409)) assert.match(r.body.detail, /Version conflict|Cannot claim/);
    const win = res.find((r) => r.status === 200)!;
    assert.is((await a.get(t.id)).claimed_by_session, win.body.claimed_by_session);
  }
});

T('next with wait_s returns as soon as a task of the role is created', async () => {
  const started = Date.now();
  const waiting = a.s.api('GET', '/tasks/next/lp?wait_s=10&claimed_by_session=poller');
  await sleep(400);
  const t = await a.create({ role: 'lp' });
  const created = Date.now();
  const r = await waiting;
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.id, t.id);
  assert.is(r.body.claimed_by_session, 'poller');
  assert.ok(Date.now() - created < 1000, `answered ${Date.now() - created} ms after the create`);
  assert.ok(created - started >= 400);
});

T('next with wait_s wakes when a blocker finishes (dependency done), not only on creation', async () => {
  const dep = await a.claimed({ role: 'lpdep-first' });
  const t = await a.create({ role: 'lpdep', depends_on: [dep.id] });
  const waiting = a.s.api('GET', '/tasks/next/lpdep?wait_s=10');
  await sleep(300);
  const doneAt = Date.now();
  await a.verb(dep.id, 'complete', { result_summary: 'unblocks the dependent' });
  const r = await waiting;
  assert.is(r.status, 200);
  assert.is(r.body.id, t.id);
  assert.ok(Date.now() - doneAt < 1000);
});

T('next with wait_s answers 404 after the wait when nothing arrives', async () => {
  const started = Date.now();
  const r = await a.s.api('GET', '/tasks/next/nothing-here?wait_s=1');
  assertError(r, 404, "No open tasks for role 'nothing-here'");
  const took = Date.now() - started;
  assert.ok(took >= 950 && took < 3000, `waited ${took} ms`);
});

T('32 long-polling clients and one new task: one 200, the rest 404 after their wait', async () => {
  const waiting = Promise.all(Array.from({ length: 32 }, () => a.s.api('GET', '/tasks/next/lp32?wait_s=1')));
  await sleep(200);
  await a.create({ role: 'lp32' });
  assert.equal(tally((await waiting).map((r) => r.status)), { 200: 1, 404: 31 });
});

T('a long-polling client that hangs up claims nothing; the task stays open for the next caller', async () => {
  const ac = new AbortController();
  const gone = fetch(`${a.s.url}/tasks/next/hangup?wait_s=5`, { headers: { authorization: `Bearer ${a.s.token}` }, signal: ac.signal }).catch(() => 'aborted');
  await sleep(200);
  ac.abort();
  assert.is(await gone, 'aborted');
  await sleep(100);
  const t = await a.create({ role: 'hangup' });
  await sleep(300);
  assert.is((await a.get(t.id)).status, 'open');
  assert.is((await a.s.api('GET', '/tasks/next/hangup')).body.id, t.id);
});

T('4 concurrent identical batches (a retried request) create each title once', async () => {
  const batch = { tasks: Array.from({ length: 20 }, (_, i) => ({ title: `retried ${i}` })) };
  const res = await Promise.all([1, 2, 3, 4].map(() => a.s.api('POST', '/tasks/batch', batch)));
  assert.equal(res.map((r) => r.status), [201, 201, 201, 201]);
  assert.is(res.reduce((n, r) => n + r.body.created.length, 0), 20);
  assert.is(res.reduce((n, r) => n + r.body.skipped_titles.length, 0), 60);
  const all = (await a.s.api('GET', '/tasks?limit=500')).body.tasks.filter((t: any) => t.title.startsWith('retried '));
  assert.is(all.length, 20);
});

T('8 concurrent first progress reports on a claimed task all succeed and all are kept', async () => {
  const t = await a.claimed({ role: 'prog-race' });
  const res = await Promise.all(Array.from({ length: 8 }, (_, i) => a.verb(t.id, 'progress', { message: `m${i}` })));
  assert.equal(res.map((r) => r.status), Array(8).fill(200), JSON.stringify(res.find((r) => r.status !== 200)?.body));
  for (const r of res) assert.is(r.body.status, 'in_progress');
  assert.is((await a.s.api('GET', `/tasks/${t.id}/progress`)).body.entries.length, 8);
});

T('batch create is atomic: one bad item → 422 and nothing created', async () => {
  const before = (await a.s.api('GET', '/tasks/counts')).body.total;
  const bad = await a.s.api('POST', '/tasks/batch', { tasks: [{ title: 'b-ok-1' }, { title: 'b-ok-2', depends_on: ['01zzzzzzzzzzzzzzzzzzzzzzzz'] }] });
  assertError(bad, 422, /non-existent/);
  const bad2 = await a.s.api('POST', '/tasks/batch', { tasks: [{ title: 'b-ok-3' }, { title: '' }] });
  assert.is(bad2.status, 422);
  assert.is((await a.s.api('GET', '/tasks/counts')).body.total, before, 'nothing created');
});

T('batch create skips titles already on the board or repeated in the batch (trimmed, any case)', async () => {
  const existing = await a.create({ title: 'Existing title' });
  const r = await a.s.api('POST', '/tasks/batch', { tasks: [
    { title: 'fresh one', depends_on: [existing.id] }, { title: 'existing TITLE ' }, { title: 'fresh two' }, { title: 'Fresh One' },
  ] });
  assert.is(r.status, 201);
  assert.equal(r.body.created.map((t: any) => t.title), ['fresh one', 'fresh two']);
  assert.equal(r.body.skipped_titles, ['existing TITLE ', 'Fresh One']);
  assert.equal(r.body.created[0].depends_on, [existing.id]);
  for (const t of r.body.created) assert.is((await a.get(t.id)).status, 'open');
});

T('claim-batch claims every listed task, or none: {claimed: [], failed: […]} and nothing left claimed', async () => {
  const [x, y, z] = [await a.create(), await a.create(), await a.create()];
  const ok = await a.s.api('POST', '/tasks/claim-batch', { task_ids: [x.id, y.id], claimed_by_session: 'batcher' });
  assert.is(ok.status, 200);
  assert.equal(ok.body.claimed.map((t: any) => [t.id, t.status, t.claimed_by_session]), [[x.id, 'claimed', 'batcher'], [y.id, 'claimed', 'batcher']]);
  assert.equal(ok.body.failed, []);

  const w = await a.create();
  const mixed = await a.s.api('POST', '/tasks/claim-batch', { task_ids: [w.id, x.id, z.id, '01zzzzzzzzzzzzzzzzzzzzzzzz'] });
  assert.is(mixed.status, 200);
  assert.equal(mixed.body.claimed, []);
  assert.equal(mixed.body.failed.map((f: any) => f.task_id).sort(), [x.id, '01zzzzzzzzzzzzzzzzzzzzzzzz'].sort());
  assert.match(mixed.body.failed.find((f: any) => f.task_id === x.id).reason, /Cannot claim task .* in state 'claimed'/);
  assert.is((await a.get(w.id)).status, 'open');
  assert.is((await a.get(z.id)).status, 'open');

  // A blocker found only while claiming (unfinished dependency) rolls back the claims already made.
  const dep = await a.create();
  const blocked = await a.create({ depends_on: [dep.id] });
  const rolled = await a.s.api('POST', '/tasks/claim-batch', { task_ids: [w.id, z.id, blocked.id] });
  assert.equal(rolled.body.claimed, []);
  assert.equal(rolled.body.failed.map((f: any) => f.task_id), [blocked.id]);
  for (const id of [w.id, z.id, blocked.id]) {
    const t = await a.get(id);
    assert.is(t.status, 'open', `${id} left open`);
    assert.is(t.claimed_by_session, null);
  }
  const stillClaimed = (await a.s.api('GET', '/tasks?status=claimed&limit=500')).body.tasks.map((t: any) => t.id);
  assert.ok(stillClaimed.includes(x.id) && stillClaimed.includes(y.id) && !stillClaimed.includes(w.id), 'only the earlier batch stays claimed');
});

T.run();
