import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Board, TEXTS_KEPT } from '../../src/tasks/board.ts';
import { ownerKey, transition } from '../../src/tasks/machine.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { at, task } from './fixtures.ts';

const boardOf = (...ts: Task[]) => { const b = new Board(); for (const t of ts) b.upsert(t); return b; };
const drain = (b: Board, role = 'backend', tenant = 'default') => {
  const out: string[] = [];
  for (let t = b.takeNext(role, tenant); t; t = b.takeNext(role, tenant)) out.push(t.id);
  return out;
};

const q = suite('ready queue');

q('next takes the lowest priority number, then the oldest, then the smallest id', () => {
  const b = boardOf(
    task('late-p1', { priority: 1, created_at: at(5) }), task('p2', { priority: 2, created_at: at(0) }),
    task('early-p1', { priority: 1, created_at: at(1) }), task('b-tie', { priority: 1, created_at: at(9) }),
    task('a-tie', { priority: 1, created_at: at(9) }), task('p0', { priority: 0, created_at: at(8) }),
  );
  assert.equal(drain(b), ['p0', 'early-p1', 'late-p1', 'a-tie', 'b-tie', 'p2']);
  assert.is(b.takeNext('backend', 'default'), undefined);
});

q('queues are per role and per tenant', () => {
  const b = boardOf(task('x', { role: 'qa' }), task('y', { tenant: 'acme' }), task('z'));
  assert.equal(drain(b, 'qa'), ['x']);
  assert.equal(drain(b, 'backend', 'acme'), ['y']);
  assert.equal(drain(b), ['z']);
  assert.is(b.takeNext('frontend', 'default'), undefined);
});

q('a taken task is not handed out twice, even if callers interleave', () => {
  const b = boardOf(task('a'), task('b'));
  const first = b.takeNext('backend', 'default');
  const second = b.takeNext('backend', 'default');
  assert.equal([first?.id, second?.id], ['a', 'b']);
  assert.is(b.takeNext('backend', 'default'), undefined);
});

q('entries made stale by later upserts are skipped', () => {
  const b = boardOf(task('a', { priority: 1 }), task('b', { priority: 2 }), task('c', { priority: 3 }));
  b.upsert(transition(b.get('a')!, 'claim', { claimed_by_session: 's' }, at(1))); // claimed by id elsewhere
  b.upsert({ ...b.get('c')!, priority: 0 }); // prioritized
  b.upsert({ ...b.get('b')!, role: 'qa' }); // moved to another role
  assert.equal(drain(b), ['c']);
  assert.equal(drain(b, 'qa'), ['b']);
  assert.is(b.readyCount('backend', 'default'), 0);
});

q('an upsert that does not change the ordering keeps one entry', () => {
  const b = boardOf(task('a'));
  for (let i = 0; i < 5; i++) b.upsert({ ...b.get('a')!, metadata: { i } });
  assert.is(b.readyCount('backend', 'default'), 1);
  assert.equal(drain(b), ['a']);
});

q('putBack after a failed claim makes the task available again, in order', () => {
  const b = boardOf(task('a', { priority: 1 }), task('b', { priority: 2 }));
  const a = b.takeNext('backend', 'default')!;
  b.putBack(a);
  assert.equal(drain(b), ['a', 'b']);
  const b2 = boardOf(task('c'));
  const c = b2.takeNext('backend', 'default')!;
  b2.upsert(transition(c, 'cancel', {}, at(1)));
  b2.putBack(c);
  assert.is(b2.takeNext('backend', 'default'), undefined, 'a task that is no longer open is not put back');
});

q('a filter skips candidates without losing them', () => {
  const b = boardOf(task('a', { parent_session_id: 'other' }), task('b', { parent_session_id: 'mine' }), task('c'));
  assert.is(b.takeNext('backend', 'default', (t) => t.parent_session_id === 'mine')?.id, 'b');
  assert.is(b.takeNext('backend', 'default', () => false), undefined);
  assert.equal(drain(b), ['a', 'c']);
});

q('dependents become ready when their dependency is done or closed, and not before', () => {
  const b = boardOf(task('dep', { role: 'qa' }), task('x', { depends_on: ['dep'] }), task('y', { depends_on: ['dep', 'x'] }));
  assert.equal(drain(b), []);
  const claimed = transition(b.get('dep')!, 'claim', {}, at(1));
  b.upsert(claimed);
  assert.equal(drain(b), []);
  b.upsert(transition(claimed, 'complete', { result_summary: 'ok' }, at(2)));
  assert.equal(drain(b), ['x'], 'y still waits on x');
  b.upsert(transition(transition(b.get('x')!, 'claim', {}, at(3)), 'complete', { result_summary: 'ok' }, at(4)));
  assert.equal(drain(b), ['y']);
});

q('a reopened dependency makes its waiting dependents unready again', () => {
  const b = boardOf(task('dep', { status: 'done' }), task('x', { depends_on: ['dep'] }));
  assert.is(b.readyCount('backend', 'default'), 1);
  b.upsert(transition(b.get('dep')!, 'reopen', {}, at(1)));
  assert.equal(drain(b), ['dep'], 'x waits again; dep itself is open for its role');
  b.upsert(transition(transition(b.get('dep')!, 'claim', {}, at(2)), 'complete', { result_summary: 'ok' }, at(3)));
  assert.equal(drain(b), ['x']);
});

q('a dependency loaded after its dependent still releases it', () => {
  const b = boardOf(task('x', { depends_on: ['dep'] }));
  assert.equal(drain(b), []);
  b.upsert(task('dep', { status: 'closed', role: 'qa' }));
  assert.equal(drain(b), ['x']);
});

const idx = suite('board indexes');

idx('all() is creation order whatever the load order; ofTenant narrows it', () => {
  const b = boardOf(task('c', { created_at: at(3) }), task('a', { created_at: at(1) }), task('b', { created_at: at(1), tenant: 'acme' }));
  b.upsert(task('d', { created_at: at(4) }));
  assert.equal(b.all().map((t) => t.id), ['a', 'b', 'c', 'd']);
  assert.equal(b.ofTenant('default').map((t) => t.id), ['a', 'c', 'd']);
  b.upsert({ ...b.get('a')!, title: 'renamed' });
  assert.is(b.all()[0]!.title, 'renamed');
  b.remove('c');
  assert.equal(b.all().map((t) => t.id), ['a', 'b', 'd']);
});

idx('status, children, dependents, owners and counts follow every change', () => {
  const b = boardOf(task('p'), task('k1', { parent_task_id: 'p', owned_files: ['f.ts'] }), task('k2', { parent_task_id: 'p', depends_on: ['k1'] }));
  assert.equal(b.children('p').map((t) => t.id), ['k1', 'k2']);
  assert.equal(b.dependents('k1').map((t) => t.id), ['k2']);
  b.upsert(transition(b.get('k1')!, 'claim', {}, at(1)));
  assert.equal(b.byStatus('claimed').map((t) => t.id), ['k1']);
  assert.is(b.activeOwners().get(ownerKey('default', 'f.ts'))?.id, 'k1');
  assert.equal([b.counts('default').open, b.counts('default').claimed, b.counts().total], [2, 1, 3]);
  assert.is(b.countActive('default'), 3);
  b.upsert(transition(b.get('k1')!, 'complete', { result_summary: 'ok' }, at(2)));
  assert.is(b.activeOwners().has(ownerKey('default', 'f.ts')), false);
  assert.equal([b.counts('default').done, b.counts('default').claimed, b.countActive('default')], [1, 0, 2]);
  assert.equal(b.byStatus('claimed'), []);
  assert.is(b.counts('nobody').total, 0);
});

idx('at 100k tasks, 10k takeNext calls each hand out a distinct ready task', () => {
  const b = new Board();
  const roles = ['backend', 'qa', 'frontend', 'security'];
  for (let i = 0; i < 100_000; i++) {
    const id = `t${String(i).padStart(6, '0')}`;
    b.upsert(task(id, { role: roles[i % 4]!, priority: i % 10, created_at: at(i), depends_on: i % 5 === 0 && i > 0 ? [`t${String(i - 1).padStart(6, '0')}`] : [] }));
  }
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const t = b.takeNext(roles[i % 4]!, 'default');
    if (!t) break;
    assert.is(t.status, 'open');
    assert.ok(b.depsSatisfied(t), `${t.id} was handed out with unfinished dependencies`);
    seen.add(t.id);
    b.upsert(transition(t, 'claim', {}, at(i)));
  }
  // Speed at this size is bench/claims.ts's business; here: no task twice, none missing.
  assert.is(seen.size, 10_000);
});

q('a board loaded in bulk queues what one filled task by task would, in the same order', async () => {
  const tasks = [
    task('dep', { status: 'claimed' as Task['status'] }), task('waits', { depends_on: ['dep'], priority: 0 }),
    task('p3', { priority: 3, created_at: at(1) }), task('p1', { priority: 1, created_at: at(2) }), task('qa', { role: 'qa' }),
    task('acme', { tenant: 'acme' }), task('done', { status: 'done' as Task['status'] }),
  ];
  const bulk = new Board();
  await bulk.load(async (put) => { for (const t of [...tasks].reverse()) put(t); });
  const one = boardOf(...tasks);
  assert.equal(drain(bulk), drain(one));
  assert.equal([drain(bulk, 'qa'), drain(bulk, 'backend', 'acme')], [['qa'], ['acme']]);
  bulk.upsert(transition(bulk.get('dep')!, 'complete', { result_summary: 'ok' } as never, at(3)));
  assert.equal(drain(bulk), ['waits'], 'a dependent is queued once its dependency is done');
});

idx('a list serialises a task once per version, and keeps the texts of the last lists only (a full list of a big board does not stay in memory)', () => {
  const b = new Board();
  const n = TEXTS_KEPT + 500;
  for (let i = 0; i < n; i++) b.upsert(task(`t${String(i).padStart(6, '0')}`));
  const first = b.get('t000000')!;
  const bytes = b.jsonOf(first);
  assert.equal(JSON.parse(bytes.toString()), first);
  assert.is(b.jsonOf(first), bytes, 'the same version: the same bytes, not serialised again');
  for (const t of b.all()) b.jsonOf(t);
  assert.is(b.textsKept, TEXTS_KEPT, 'one list of every task keeps at most TEXTS_KEPT texts');
  const changed = { ...first, title: 'renamed', version: first.version + 1 };
  b.upsert(changed);
  assert.is(JSON.parse(b.jsonOf(changed).toString()).title, 'renamed', 'a new version is serialised anew');
});

q.run();
idx.run();
