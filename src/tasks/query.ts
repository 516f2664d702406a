import { isTerminal } from './machine.ts';
import { TASK_STATUSES, type ListQuery, type PaginatedTasks, type SearchQuery, type SearchResponse, type Task, type TaskCounts } from './schema.ts';

// Every function here takes tasks in creation order (created_at, then id), as Board.all() returns them.

/** The hard cap of the legacy flat GET /tasks list. */
export const FLAT_LIST_CAP = 1000;
/** Page size of GET /tasks when only offset is given. */
export const DEFAULT_LIST_LIMIT = 100;

/** Creation order: created_at, then id. */
export function byCreation(a: Task, b: Task): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The filters of GET /tasks (status, cell_id, tenant, claimed_by_session, parent_session_id), exact match. */
export function filterTasks(tasks: Iterable<Task>, q: Omit<ListQuery, 'limit' | 'offset'>): Task[] {
  const out: Task[] = [];
  for (const t of tasks) {
    if (q.status !== undefined && t.status !== q.status) continue;
    if (q.cell_id !== undefined && t.cell_id !== q.cell_id) continue;
    if (q.tenant !== undefined && t.tenant !== q.tenant) continue;
    if (q.claimed_by_session !== undefined && t.claimed_by_session !== q.claimed_by_session) continue;
    if (q.parent_session_id !== undefined && t.parent_session_id !== q.parent_session_id) continue;
    out.push(t);
  }
  return out;
}

/** True when GET /tasks should answer the paginated envelope (limit or offset given). */
export const isPaginated = (q: ListQuery): boolean => q.limit !== undefined || q.offset !== undefined;

/** The legacy flat list: filtered, first FLAT_LIST_CAP tasks. */
export function flatList(tasks: Iterable<Task>, q: ListQuery): Task[] {
  return filterTasks(tasks, q).slice(0, FLAT_LIST_CAP);
}

/** One page of already filtered tasks as the envelope {tasks, total, limit, offset}. */
export function paginate(tasks: readonly Task[], limit: number, offset: number): PaginatedTasks {
  return { tasks: tasks.slice(offset, offset + limit), total: tasks.length, limit, offset };
}

/** The paginated envelope of GET /tasks: filtered, then one page (limit defaults to DEFAULT_LIST_LIMIT). */
export function pageList(tasks: Iterable<Task>, q: ListQuery): PaginatedTasks {
  return paginate(filterTasks(tasks, q), q.limit ?? DEFAULT_LIST_LIMIT, q.offset ?? 0);
}

type SortKey = SearchQuery['sort'];
const fieldCompare: Record<Exclude<SortKey, 'created_at'>, (a: Task, b: Task) => number> = {
  priority: (a, b) => a.priority - b.priority,
  title: (a, b) => cmp(a.title, b.title),
  role: (a, b) => cmp(a.role, b.role),
  status: (a, b) => cmp(a.status, b.status),
};
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** True when every word of `text` appears in the task's title or description, ignoring case. */
export function matchesText(task: Pick<Task, 'title' | 'description'>, text: string): boolean {
  const hay = `${task.title}\n${task.description}`.toLowerCase();
  return text.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

/** GET /tasks/search: exact filters (status, role, assigned_agent), text, id prefix, terminal or not; sort with an id tiebreak, then one page. */
export function searchTasks(tasks: Iterable<Task>, q: SearchQuery): SearchResponse {
  const hits: Task[] = [];
  for (const t of tasks) {
    if (q.status !== undefined && t.status !== q.status) continue;
    if (q.role !== undefined && t.role !== q.role) continue;
    if (q.assigned_agent !== undefined && t.assigned_agent !== q.assigned_agent) continue;
    if (q.id_prefix !== undefined && !t.id.startsWith(q.id_prefix.toLowerCase())) continue;
    if (q.terminal !== undefined && isTerminal(t.status) !== q.terminal) continue;
    if (q.q !== undefined && !matchesText(t, q.q)) continue;
    hits.push(t);
  }
  const dir = q.order === 'asc' ? 1 : -1;
  // created_at order is the input order already; other keys sort with the id as the stable tiebreak.
  if (q.sort !== 'created_at') {
    const by = fieldCompare[q.sort];
    hits.sort((a, b) => dir * (by(a, b) || cmp(a.id, b.id)));
  } else if (dir === -1) hits.reverse();
  const start = (q.page - 1) * q.per_page;
  return {
    tasks: hits.slice(start, start + q.per_page), total: hits.length, page: q.page, per_page: q.per_page,
    total_pages: Math.max(1, Math.ceil(hits.length / q.per_page)), sort: q.sort, order: q.order,
  };
}

/** Counts with every status at 0. */
export function emptyCounts(): TaskCounts {
  const counts = { total: 0 } as TaskCounts;
  for (const s of TASK_STATUSES) counts[s] = 0;
  return counts;
}

/** One key per status plus total, optionally narrowed to a tenant. */
export function countTasks(tasks: Iterable<Task>, tenant?: string): TaskCounts {
  const counts = emptyCounts();
  for (const t of tasks) {
    if (tenant !== undefined && t.tenant !== tenant) continue;
    counts[t.status] += 1;
    counts.total += 1;
  }
  return counts;
}
