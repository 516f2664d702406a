import { defineCommand, type ArgsDef } from 'citty';
import { readFileSync } from 'node:fs';
import { UsageError, intArg } from './args.ts';
import { call } from './client.ts';
import { command, type RunContext } from './command.ts';
import { CONN, endpoint, optional, query, resolveTaskId } from './remote.ts';
import { graphText, taskDetail, taskTable, type Graph } from './task-view.ts';

type Task = Record<string, unknown> & { id: string; title: string; status: string };
type Page = { tasks: Task[]; total: number; page: number; total_pages: number };
const ID = { id: { type: 'positional', description: 'Task id, or a unique start of it (at least 6 characters)' } } as const satisfies ArgsDef;
const REASON = { reason: { type: 'string', valueHint: 'text', description: 'Why (kept with the task)' } } as const satisfies ArgsDef;

const show = (c: RunContext, data: unknown) => c.out(c.values.json ? JSON.stringify(data, null, 2) : taskTable(Array.isArray(data) ? data as Task[] : [data as Task]));
const idOf = (c: RunContext) => resolveTaskId(endpoint(c), c.positionals[0]);
const fileOr = (v: string | undefined) => (v?.startsWith('@') ? readFileSync(v.slice(1), 'utf8') : v);

// A verb that posts an optional {reason} body and prints the task.
const verb = (name: string, description: string, extra: ArgsDef = {}, bodyOf: (c: RunContext) => unknown = (c) => optional({ reason: c.values.reason })) =>
  command({ name: `task ${name}`, description }, { ...ID, ...CONN, ...REASON, ...extra }, async (c) => {
    show(c, await call(endpoint(c), 'POST', `/tasks/${await idOf(c)}/${name}`, bodyOf(c)));
  });

const create = command({ name: 'task create', description: 'Create a task' }, {
  title: { type: 'positional', description: 'Title' }, ...CONN,
  description: { type: 'string', valueHint: 'text|@file', description: 'What to do (text, or @file to read it from a file)' },
  role: { type: 'string', valueHint: 'role', description: 'Kind of worker, e.g. backend, qa (default backend)' },
  priority: { type: 'string', valueHint: '0-1000', description: 'Lower runs first (default 2)' },
  'depends-on': { type: 'string', valueHint: 'ids', description: 'Comma-separated ids of tasks that must finish first' },
  model: { type: 'string', valueHint: 'model', description: 'Model for the agent (default: the adapter\'s)' },
  parent: { type: 'string', valueHint: 'id', description: 'Create it as a subtask of this task' },
  scope: { type: 'enum', options: ['small', 'medium', 'large'], description: 'Size of the work' },
}, async (c) => {
  const ep = endpoint(c);
  const deps = (c.values['depends-on'] as string | undefined)?.split(',').map((s) => s.trim()).filter(Boolean);
  const body = optional({
    title: c.positionals[0], role: c.values.role, model: c.values.model, scope: c.values.scope,
    description: fileOr(c.values.description as string | undefined),
    priority: intArg('priority', c.values.priority, 0, 1000),
    depends_on: deps ? await Promise.all(deps.map((d) => resolveTaskId(ep, d))) : undefined,
    parent_task_id: c.values.parent ? await resolveTaskId(ep, c.values.parent as string) : undefined,
  });
  show(c, await call(ep, 'POST', c.values.parent ? '/tasks/self-create' : '/tasks', body));
});

const LIST_ARGS = {
  ...CONN,
  status: { type: 'string', valueHint: 'status', description: 'Only tasks in this state (open, claimed, in_progress, done, blocked, …)' },
  role: { type: 'string', valueHint: 'role', description: 'Only tasks of this role' },
  all: { type: 'boolean', description: 'Also finished tasks (failed, closed, refused, cancelled)' },
  limit: { type: 'string', valueHint: '1-100', description: 'Tasks per page (default 50)' },
  page: { type: 'string', valueHint: 'n', description: 'Page number (default 1)' },
  tenant: { type: 'string', valueHint: 'name', description: 'Tenant (default: the token\'s, else default)' },
} as const satisfies ArgsDef;

// One page of a search, newest first; finished tasks only with --all or an explicit --status.
async function searchPage(c: RunContext, text?: string): Promise<Page> {
  const q = query({
    q: text, status: c.values.status as string | undefined, role: c.values.role as string | undefined, tenant: c.values.tenant as string | undefined,
    terminal: c.values.all || c.values.status ? undefined : false, sort: 'created_at', order: 'desc',
    per_page: intArg('limit', c.values.limit, 1, 100) ?? 50, page: intArg('page', c.values.page, 1, 1e6) ?? 1,
  });
  return call<Page>(endpoint(c), 'GET', `/tasks/search?${q}`);
}

function printPage(c: RunContext, page: Page): void {
  if (c.values.json) return c.out(JSON.stringify(page, null, 2));
  const more = page.total_pages > page.page ? `, page ${page.page} of ${page.total_pages} (--page)` : '';
  const hint = c.values.all || c.values.status ? '' : '; --all shows finished tasks too';
  c.out(`${taskTable(page.tasks)}\n(${page.tasks.length} of ${page.total}${more}${hint})`);
}

const list = command({ name: 'task list', description: 'List tasks that are not finished, newest first' }, LIST_ARGS, async (c) => printPage(c, await searchPage(c)));

const search = command({ name: 'task search', description: 'Find tasks whose title or description holds every word of TEXT' }, {
  text: { type: 'positional', description: 'Words to look for (case does not matter)' }, ...LIST_ARGS,
}, async (c) => printPage(c, await searchPage(c, c.positionals[0])));

const next = command({ name: 'task next', description: 'Claim the next open task of a role (exit 3 when there is none)' }, {
  role: { type: 'positional', description: 'Role to take work for' }, ...CONN,
  session: { type: 'string', valueHint: 'name', description: 'Name of the session that holds the claim' },
  wait: { type: 'string', valueHint: 'seconds', description: 'Wait up to this long for a task to appear (0-60)' },
}, async (c) => {
  const q = query({ claimed_by_session: c.values.session as string | undefined, wait_s: intArg('wait', c.values.wait, 0, 60) });
  show(c, await call(endpoint(c), 'GET', `/tasks/next/${encodeURIComponent(c.positionals[0] ?? '')}?${q}`));
});

const claim = command({ name: 'task claim', description: 'Claim a task by id' }, {
  ...ID, ...CONN,
  'expected-version': { type: 'string', valueHint: 'n', description: 'Claim only if the task is still at this version' },
  session: { type: 'string', valueHint: 'name', description: 'Name of the session that holds the claim' },
}, async (c) => {
  const q = query({ expected_version: intArg('expected-version', c.values['expected-version'], 0, Number.MAX_SAFE_INTEGER), claimed_by_session: c.values.session as string | undefined });
  show(c, await call(endpoint(c), 'POST', `/tasks/${await idOf(c)}/claim?${q}`));
});

const complete = command({ name: 'task complete', description: 'Complete a task (an open one is claimed and completed in one step)' }, {
  ...ID, ...CONN,
  summary: { type: 'string', valueHint: 'text', description: 'What was done (required)' },
  payload: { type: 'string', valueHint: 'json|@file', description: 'Structured report of the completion contract (JSON, or @file)' },
  next: { type: 'string', valueHint: 'role', description: 'Then claim the next open task of this role for the same session, in the same request' },
}, async (c) => {
  if (c.values.summary === undefined) throw new UsageError('--summary is required');
  let payload: unknown;
  try {
    payload = c.values.payload === undefined ? undefined : JSON.parse(fileOr(c.values.payload as string)!);
  } catch {
    throw new UsageError('--payload must be JSON');
  }
  const body = optional({ result_summary: c.values.summary, payload });
  const role = c.values.next as string | undefined;
  if (role === undefined) return show(c, await call(endpoint(c), 'POST', `/tasks/${await idOf(c)}/complete`, body));
  const cycle = await call<{ completed: Task; next: Task | null }>(endpoint(c), 'POST', `/tasks/${await idOf(c)}/complete?${query({ next: role })}`, body);
  if (c.values.json) return c.out(JSON.stringify(cycle, null, 2));
  c.out(`${taskTable([cycle.completed])}\n${cycle.next ? `next:\n${taskTable([cycle.next])}` : `next: no open task of role '${role}'`}`);
});

const COUNTERS = ['files-changed', 'tests-passing', 'errors'] as const;
const progress = command({ name: 'task progress', description: 'Report progress on a task' }, {
  ...ID, ...CONN, message: { type: 'string', valueHint: 'text', description: 'What is happening' },
  percent: { type: 'string', valueHint: '0-100', description: 'How far along' },
  'files-changed': { type: 'string', valueHint: 'n', description: 'Files changed so far' },
  'tests-passing': { type: 'string', valueHint: 'n', description: 'Tests passing now' },
  errors: { type: 'string', valueHint: 'n', description: 'Errors seen now' },
}, async (c) => {
  const counters = Object.fromEntries(COUNTERS.map((k) => [k.replace('-', '_'), intArg(k, c.values[k], 0, 1e9)]));
  show(c, await call(endpoint(c), 'POST', `/tasks/${await idOf(c)}/progress`, optional({ message: c.values.message, percent: intArg('percent', c.values.percent, 0, 100), ...counters })));
});

const showCmd = command({ name: 'task show', description: 'Show every field of one task' }, { ...ID, ...CONN }, async (c) => {
  const t = await call<Task>(endpoint(c), 'GET', `/tasks/${await idOf(c)}`);
  c.out(c.values.json ? JSON.stringify(t, null, 2) : taskDetail(t));
});

const counts = command({ name: 'task counts', description: 'Number of tasks per status' }, { ...CONN }, async (c) => {
  const data = await call<Record<string, number>>(endpoint(c), 'GET', '/tasks/counts');
  c.out(c.values.json ? JSON.stringify(data, null, 2) : Object.entries(data).map(([status, n]) => `${status.padEnd(22)} ${n}`).join('\n'));
});

const graph = command({ name: 'task graph', description: 'Dependency tree, critical path and bottlenecks' }, { ...CONN }, async (c) => {
  const g = await call<Graph>(endpoint(c), 'GET', '/tasks/graph');
  c.out(c.values.json ? JSON.stringify(g, null, 2) : graphText(g));
});

const close = verb('close', 'Close a done task; --merged closes a blocked one whose work you merged by hand', {
  merged: { type: 'boolean', description: 'You merged its work yourself (after a merge conflict)' },
}, (c) => optional({ merged: c.values.merged === true ? true : undefined, reason: c.values.reason }));

/** `svc task …`: the HTTP client for people and agents. */
export const taskCommand = defineCommand({
  meta: { name: 'task', description: 'Work with the tasks of a running svc' },
  subCommands: {
    create, list, search, show: showCmd, graph, next, claim, complete, progress, counts,
    fail: verb('fail', 'Fail a task'), release: verb('release', 'Give a claimed task back (open again)'),
    cancel: verb('cancel', 'Cancel a task and its subtasks'), block: verb('block', 'Block a task until a person unblocks it'),
    unblock: verb('unblock', 'Unblock a task (open again)'), reopen: verb('reopen', 'Reopen a done task'),
    close, prioritize: verb('prioritize', 'Give a task priority 0 (runs first)', {}, () => undefined),
  },
});
