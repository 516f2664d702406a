import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FLAT_LIST_CAP, countTasks, flatList, isPaginated, pageList, paginate, searchTasks } from '../../src/tasks/query.ts';
import type { SearchQuery, Task, TaskStatus } from '../../src/tasks/schema.ts';
import { at, task } from './fixtures.ts';

// Ten tasks in creation order; priorities and roles vary.
const board = (): Task[] => Array.from({ length: 10 }, (_, i) => task(`t${i}`, {
  created_at: at(i), priority: i % 3, role: i % 2 ? 'qa' : 'backend', title: `Title ${String.fromCharCode(106 - i)}`,
  status: (i < 4 ? 'open' : i < 7 ? 'claimed' : 'done') as TaskStatus, cell_id: i < 5 ? 'c1' : null,
  tenant: i === 9 ? 'acme' : 'default', claimed_by_session: i === 5 ? 's5' : null, parent_session_id: i === 6 ? 'coord' : null,
  assigned_agent: i === 4 ? 'agent-4' : null,
}));
const ids = (ts: Task[]) => ts.map((t) => t.id);
const search = (q: Partial<SearchQuery>) => searchTasks(board(), { page: 1, per_page: 20, sort: 'created_at', order: 'desc', ...q });

const l = suite('GET /tasks');

l('filters are exact and combine', () => {
  assert.equal(ids(flatList(board(), { status: 'open', cell_id: 'c1' })), ['t0', 't1', 't2', 't3']);
  assert.equal(ids(flatList(board(), { tenant: 'acme' })), ['t9']);
  assert.equal(ids(flatList(board(), { claimed_by_session: 's5' })), ['t5']);
  assert.equal(ids(flatList(board(), { parent_session_id: 'coord' })), ['t6']);
  assert.equal(flatList(board(), { status: 'refused' }), []);
});

l('limit or offset switch to the envelope; offset past the end is an empty page with the total', () => {
  assert.is(isPaginated({}), false);
  assert.is(isPaginated({ offset: 0 }), true);
  const page = pageList(board(), { limit: 3, offset: 2 });
  assert.equal([ids(page.tasks), page.total, page.limit, page.offset], [['t2', 't3', 't4'], 10, 3, 2]);
  const past = pageList(board(), { limit: 5, offset: 50 });
  assert.equal([past.tasks, past.total], [[], 10]);
  assert.is(pageList(board(), { offset: 1 }).limit, 100, 'offset alone pages with the default limit');
  assert.equal(paginate([], 10, 0), { tasks: [], total: 0, limit: 10, offset: 0 });
});

l('the flat list is capped', () => {
  const many = Array.from({ length: FLAT_LIST_CAP + 5 }, (_, i) => task(`x${String(i).padStart(5, '0')}`));
  assert.is(flatList(many, {}).length, FLAT_LIST_CAP);
});

const s = suite('GET /tasks/search');

s('default is newest first, one page of 20 with page metadata', () => {
  const r = search({});
  assert.equal(ids(r.tasks), ['t9', 't8', 't7', 't6', 't5', 't4', 't3', 't2', 't1', 't0']);
  assert.equal([r.total, r.page, r.per_page, r.total_pages, r.sort, r.order], [10, 1, 20, 1, 'created_at', 'desc']);
});

s('pages split the hits; a page past the end is empty but keeps total_pages', () => {
  assert.equal(ids(search({ per_page: 4, page: 3, order: 'asc' }).tasks), ['t8', 't9']);
  assert.is(search({ per_page: 4 }).total_pages, 3);
  const past = search({ per_page: 4, page: 9 });
  assert.equal([past.tasks, past.total_pages], [[], 3]);
  assert.is(search({ status: 'failed' }).total_pages, 1, 'no hits still reports one page');
});

s('sorting by priority ties on id, in the order asked', () => {
  assert.equal(ids(search({ sort: 'priority', order: 'asc' }).tasks), ['t0', 't3', 't6', 't9', 't1', 't4', 't7', 't2', 't5', 't8']);
  assert.equal(ids(search({ sort: 'priority', order: 'desc' }).tasks), ['t8', 't5', 't2', 't7', 't4', 't1', 't9', 't6', 't3', 't0']);
});

s('sorting by title, role and status', () => {
  assert.equal(ids(search({ sort: 'title', order: 'asc' }).tasks).slice(0, 3), ['t9', 't8', 't7']);
  assert.equal(ids(search({ sort: 'role', order: 'asc', per_page: 5 }).tasks), ['t0', 't2', 't4', 't6', 't8']);
  assert.equal(ids(search({ sort: 'status', order: 'asc', per_page: 3 }).tasks), ['t4', 't5', 't6']);
});

s('filters by status, role and assigned agent', () => {
  assert.equal(ids(search({ role: 'qa', status: 'open', order: 'asc' }).tasks), ['t1', 't3']);
  assert.equal(ids(search({ assigned_agent: 'agent-4' }).tasks), ['t4']);
});

const c = suite('counts');

c('one key per status plus total, optionally per tenant', () => {
  const all = countTasks(board());
  assert.equal(all, { open: 4, claimed: 3, in_progress: 0, done: 3, failed: 0, closed: 0, blocked: 0, waiting_for_subtasks: 0, refused: 0, cancelled: 0, total: 10 });
  assert.is(countTasks(board(), 'acme').done, 1);
  assert.is(countTasks(board(), 'acme').total, 1);
  assert.is(countTasks(board(), 'nobody').total, 0);
});

l.run();
s.run();
c.run();
