import { defineCommand, type ArgsDef } from 'citty';
import { readFileSync } from 'node:fs';
import { UsageError, intArg } from './args.ts';
import { call, resolveEndpoint } from './client.ts';
import { command, type RunContext } from './command.ts';
import { table } from './table.ts';

type Task = Record<string, unknown>;
const COLUMNS = ['id', 'status', 'role', 'priority', 'title'];
const CONN: ArgsDef = {
  server: { type: 'string', description: 'Server URL (default SERVICE_SERVER_URL or the local .sdd)' },
  token: { type: 'string', description: 'Bearer token (default SERVICE_AUTH_TOKEN or .sdd/secrets/admin.token)' },
};
const ID: ArgsDef = { id: { type: 'positional', description: 'Task id' } };

const ep = (c: RunContext) => resolveEndpoint(c.env, String(c.values.workdir ?? process.cwd()), { server: c.values.server as string | undefined, token: c.values.token as string | undefined });
const show = (c: RunContext, data: unknown, columns = COLUMNS) => {
  if (c.values.json) return c.out(JSON.stringify(data, null, 2));
  const rows = Array.isArray(data) ? (data as Task[]) : [data as Task];
  c.out(table(rows, columns));
};
const id = (c: RunContext) => encodeURIComponent(c.positionals[0] ?? '');
const optional = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

// A verb that posts an optional {reason} body and prints the task.
const verb = (name: string, description: string, bodyOf: (c: RunContext) => unknown = (c) => optional({ reason: c.values.reason })) =>
  command({ name: `task ${name}`, description }, { ...ID, ...CONN, reason: { type: 'string', description: 'Reason' } }, async (c) => {
    show(c, await call(ep(c), 'POST', `/tasks/${id(c)}/${name}`, bodyOf(c)));
  });

const create = command({ name: 'task create', description: 'Create a task' }, {
  title: { type: 'positional', description: 'Title' }, ...CONN,
  description: { type: 'string', description: 'Description (or @file)' }, role: { type: 'string', description: 'Role (default backend)' },
  priority: { type: 'string', description: '0 (highest) … 1000' }, 'depends-on': { type: 'string', description: 'Comma-separated task ids' },
  model: { type: 'string', description: 'Model' }, parent: { type: 'string', description: 'Parent task id (creates a subtask)' },
  scope: { type: 'string', description: 'small|medium|large' },
}, async (c) => {
  const desc = c.values.description as string | undefined;
  const body = optional({
    title: c.positionals[0], role: c.values.role, model: c.values.model, scope: c.values.scope,
    description: desc?.startsWith('@') ? readFileSync(desc.slice(1), 'utf8') : desc,
    priority: intArg('priority', c.values.priority, 0, 1000),
    depends_on: (c.values['depends-on'] as string | undefined)?.split(',').map((s) => s.trim()).filter(Boolean),
    parent_task_id: c.values.parent,
  });
  show(c, await call(ep(c), 'POST', c.values.parent ? '/tasks/self-create' : '/tasks', body));
});

const list = command({ name: 'task list', description: 'List tasks' }, {
  ...CONN, status: { type: 'string', description: 'Filter by status' }, limit: { type: 'string', description: '1..500 (default 100)' },
  offset: { type: 'string', description: 'Offset' }, tenant: { type: 'string', description: 'Tenant' },
}, async (c) => {
  const q = new URLSearchParams(optional({ status: c.values.status, tenant: c.values.tenant, limit: String(intArg('limit', c.values.limit, 1, 500) ?? 100), offset: String(intArg('offset', c.values.offset, 0, 1e9) ?? 0) }) as Record<string, string>);
  const page = await call<{ tasks: Task[]; total: number }>(ep(c), 'GET', `/tasks?${q}`);
  if (c.values.json) return c.out(JSON.stringify(page, null, 2));
  c.out(`${table(page.tasks, COLUMNS)}\n(${page.tasks.length} of ${page.total})`);
});

const next = command({ name: 'task next', description: 'Claim the next open task of a role' }, {
  role: { type: 'positional', description: 'Role' }, ...CONN, session: { type: 'string', description: 'claimed_by_session' },
  wait: { type: 'string', description: 'Seconds to wait for a task (0..60)' },
}, async (c) => {
  const q = new URLSearchParams(optional({ claimed_by_session: c.values.session, wait_s: c.values.wait === undefined ? undefined : String(intArg('wait', c.values.wait, 0, 60)) }) as Record<string, string>);
  show(c, await call(ep(c), 'GET', `/tasks/next/${encodeURIComponent(c.positionals[0] ?? '')}?${q}`));
});

const claim = command({ name: 'task claim', description: 'Claim a task by id' }, {
  ...ID, ...CONN, 'expected-version': { type: 'string', description: 'Compare-and-set on the version' }, session: { type: 'string', description: 'claimed_by_session' },
}, async (c) => {
  const ev = intArg('expected-version', c.values['expected-version'], 0, Number.MAX_SAFE_INTEGER);
  const q = new URLSearchParams(optional({ expected_version: ev === undefined ? undefined : String(ev), claimed_by_session: c.values.session }) as Record<string, string>);
  show(c, await call(ep(c), 'POST', `/tasks/${id(c)}/claim?${q}`));
});

const complete = command({ name: 'task complete', description: 'Complete a task' }, {
  ...ID, ...CONN, summary: { type: 'string', description: 'result_summary (required)' }, payload: { type: 'string', description: 'Completion contract JSON (or @file)' },
}, async (c) => {
  if (c.values.summary === undefined) throw new UsageError('--summary is required');
  const raw = c.values.payload as string | undefined;
  let payload: unknown;
  try {
    payload = raw === undefined ? undefined : JSON.parse(raw.startsWith('@') ? readFileSync(raw.slice(1), 'utf8') : raw);
  } catch {
    throw new UsageError('--payload must be JSON');
  }
  show(c, await call(ep(c), 'POST', `/tasks/${id(c)}/complete`, optional({ result_summary: c.values.summary, payload })));
});

const progress = command({ name: 'task progress', description: 'Report progress' }, {
  ...ID, ...CONN, message: { type: 'string', description: 'Message' }, percent: { type: 'string', description: '0..100' },
  'files-changed': { type: 'string', description: 'Files changed' }, 'tests-passing': { type: 'string', description: 'Tests passing' }, errors: { type: 'string', description: 'Errors' },
}, async (c) => {
  show(c, await call(ep(c), 'POST', `/tasks/${id(c)}/progress`, optional({
    message: c.values.message, percent: intArg('percent', c.values.percent, 0, 100),
    files_changed: intArg('files-changed', c.values['files-changed'], 0, 1e9), tests_passing: intArg('tests-passing', c.values['tests-passing'], 0, 1e9), errors: intArg('errors', c.values.errors, 0, 1e9),
  })));
});

const showCmd = command({ name: 'task show', description: 'Show one task' }, { ...ID, ...CONN }, async (c) => {
  const t = await call<Task>(ep(c), 'GET', `/tasks/${id(c)}`);
  if (c.values.json) return c.out(JSON.stringify(t, null, 2));
  c.out(Object.entries(t).map(([k, v]) => `${k.padEnd(20)} ${v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join('\n'));
});

const counts = command({ name: 'task counts', description: 'Number of tasks per status' }, { ...CONN }, async (c) => {
  const data = await call<Record<string, number>>(ep(c), 'GET', '/tasks/counts');
  show(c, c.values.json ? data : Object.entries(data).map(([status, n]) => ({ status, n })), ['status', 'n']);
});

/** `svc task …`: the HTTP client for people and agents. */
export const taskCommand = defineCommand({
  meta: { name: 'task', description: 'Work with tasks over HTTP (SERVICE_SERVER_URL, SERVICE_AUTH_TOKEN)' },
  subCommands: {
    create, list, show: showCmd, next, claim, complete, progress, counts,
    fail: verb('fail', 'Fail a task'), release: verb('release', 'Release a claimed task back to open'),
    cancel: verb('cancel', 'Cancel a task and its subtasks'), block: verb('block', 'Block a task'),
    unblock: verb('unblock', 'Unblock a task'), reopen: verb('reopen', 'Reopen a done task'),
    close: verb('close', 'Close a done task', () => undefined), prioritize: verb('prioritize', 'Set priority 0', () => undefined),
  },
});
