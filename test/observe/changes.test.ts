// The board's change feed as plain values: the ring behind Last-Event-ID, the tracker's facts, the feed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoardFeed } from '../../src/observe/board-feed.ts';
import { ChangeRing } from '../../src/observe/changes.ts';
import { TaskTracker } from '../../src/observe/tracker.ts';
import type { Task } from '../../src/tasks/index.ts';

const task = (id: string, status: Task['status'], version: number, at: string, extra: Partial<Task> = {}): Task => ({
  id, title: `task ${id}`, description: '', role: 'backend', priority: 2, scope: 'medium', complexity: 'medium', status, assigned_agent: null,
  claimed_by_session: null, parent_session_id: null, parent_task_id: null, depends_on: [], owned_files: [], cell_id: null, tenant: 'default',
  version, estimated_minutes: 30, model: null, result_summary: null, failure: null, status_reason: null, branch: null, metadata: {},
  chat_context: null, node_id: null, retry_count: 0, max_retries: 2, claim_count: 0, created_at: '2026-01-01T00:00:00.000Z',
  updated_at: at, claimed_at: null, completed_at: null, ...extra,
});

test('ring: a resume inside the ring gets exactly the changes after its id, oldest first', () => {
  const r = new ChangeRing(4, 1000);
  for (let i = 0; i < 3; i++) r.push('task_updated', 'default', { i });
  assert.is(r.seq, 1003);
  const s = r.since(1001);
  assert.equal(s.kind === 'changes' ? s.changes.map((c) => [c.seq, JSON.parse(c.data).i]) : s, [[1002, 1], [1003, 2]]);
  assert.equal(r.since(1003), { kind: 'changes', changes: [] }, 'up to date: nothing to replay');
  assert.equal(r.since(1000).kind, 'changes', 'from the very start while nothing was dropped');
});

test('ring: an id older than the ring, from a future, or not a number gets a reset naming the current sequence', () => {
  const r = new ChangeRing(3, 0);
  for (let i = 0; i < 10; i++) r.push('task_created', 'default', { i });
  assert.equal(r.since(6), { kind: 'reset', seq: 10 }, 'change 7 was dropped (the ring holds 8..10)');
  assert.is(r.since(7).kind, 'changes');
  assert.equal(r.since(11), { kind: 'reset', seq: 10 }, 'an id this run never gave (an earlier server) resets');
  assert.equal(r.since(Number.NaN), { kind: 'reset', seq: 10 });
});

test('ring: a new server starts above every id of an earlier run, so an old id resets instead of silently skipping', () => {
  const before = new ChangeRing(100, Date.parse('2026-01-01T00:00:00Z') * 1000);
  for (let i = 0; i < 50; i++) before.push('task_updated', 'default', {});
  const after = new ChangeRing(100, Date.parse('2026-01-01T00:00:05Z') * 1000);
  after.push('task_updated', 'default', {});
  assert.is(after.since(before.seq).kind, 'reset');
});

test('tracker: created, transitions, claim wait from the time the task became open, manual merges, stale versions dropped', () => {
  const tr = new TaskTracker();
  assert.equal(tr.observe(task('a', 'open', 1, '2026-01-01T00:00:00.000Z')), { kind: 'created', from: null, to: 'open', claimWaitS: null, manualMerge: false });
  const claimed = tr.observe(task('a', 'claimed', 2, '2026-01-01T00:00:30.000Z', { claimed_at: '2026-01-01T00:00:30.000Z' }));
  assert.equal(claimed, { kind: 'updated', from: 'open', to: 'claimed', claimWaitS: 30, manualMerge: false });
  assert.is(tr.observe(task('a', 'open', 2, '2026-01-01T00:00:31.000Z')), null, 'a change older than the one seen is dropped');
  tr.observe(task('a', 'open', 3, '2026-01-01T00:01:00.000Z'));
  const again = tr.observe(task('a', 'claimed', 4, '2026-01-01T00:01:05.000Z', { claimed_at: '2026-01-01T00:01:05.000Z' }));
  assert.is(again?.claimWaitS, 5, 'released and claimed again: the wait counts from the release');
  tr.observe(task('a', 'blocked', 5, '2026-01-01T00:02:00.000Z'));
  assert.is(tr.observe(task('a', 'closed', 6, '2026-01-01T00:03:00.000Z'))?.manualMerge, true);
  // Open since long before or after the first time seen (kept relative to it): the wait is still exact.
  tr.seed([{ id: 'old', status: 'open', version: 1, updated_at: '2024-01-01T00:00:00.000Z' }, { id: 'new', status: 'open', version: 1, updated_at: '2027-06-01T00:00:00.250Z' }]);
  assert.is(tr.observe(task('old', 'claimed', 2, '2026-01-01T00:00:00.000Z', { claimed_at: '2026-01-01T00:00:00.000Z' }))?.claimWaitS, 731 * 86400);
  assert.is(tr.observe(task('new', 'claimed', 2, '2027-06-01T00:00:01.000Z', { claimed_at: '2027-06-01T00:00:01.000Z' }))?.claimWaitS, 0.75);
});

test('feed: task changes and progress become numbered events for subscribers, with the card and the metrics told', () => {
  const heard: string[] = [];
  const recorder = {
    taskCreated: () => heard.push('created'), transition: (f: string, t: string) => heard.push(`${f}->${t}`), claimWait: (s: number) => heard.push(`wait ${s}`),
    runEnded: () => heard.push('run'), gates: () => heard.push('gates'), merge: (o: string) => heard.push(`merge ${o}`), event: () => undefined, cacheLookup: () => undefined,
  };
  const tasks = new Map<string, Task>();
  const feed = new BoardFeed({ ringSize: 16, base: 0, recorder, get: (id) => tasks.get(id) });
  const got: { seq: number; event: string; data: Record<string, unknown> }[] = [];
  const off = feed.subscribe((c) => got.push({ seq: c.seq, event: c.event, data: JSON.parse(c.data) }));
  const t1 = task('b', 'open', 1, '2026-01-01T00:00:00.000Z');
  tasks.set('b', t1);
  feed.taskChanged(t1);
  const t2 = task('b', 'in_progress', 3, '2026-01-01T00:00:10.000Z');
  tasks.set('b', t2);
  feed.taskChanged(t2);
  feed.progressed('b', { percent: 40, message: 'half way', ts: '2026-01-01T00:00:11.000Z' });
  off();
  feed.taskChanged(task('b', 'done', 4, '2026-01-01T00:00:20.000Z'));
  assert.equal(got.map((g) => [g.seq, g.event, g.data.status, g.data.version, g.data.progress]), [[1, 'task_created', 'open', 1, null], [2, 'task_updated', 'in_progress', 3, null], [3, 'task_updated', 'in_progress', 3, 40]]);
  assert.is(got.length, 3, 'an unsubscribed listener hears nothing more');
  assert.is(feed.ring.seq, 4);
  assert.equal(heard, ['created', 'open->in_progress', 'in_progress->done']);
  assert.is(feed.progressOf('b'), undefined, 'progress of a finished run is dropped');
});

test.run();
