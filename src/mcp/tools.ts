// The MCP tools: each one names the API operation it mirrors (access level, task scope) and builds its
// input schema from the API's own request shapes, so a tool accepts what the endpoint accepts.
import { Type, type TObject, type TSchema } from '../lib/typebox.ts';
import * as S from './board.ts';
import type { Caller, McpBoard, Task } from './board.ts';

/** What a tool's `run` gets. */
export interface ToolCall {
  board: McpBoard;
  caller: Caller;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
}

/** One tool: its schema, the API operation it mirrors and what it does with validated arguments. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  /** The API operation whose access level and task scope apply (per call: task_graph has two). */
  operation: (args: Record<string, unknown>) => string;
  /** Advertised to clients (tools/list). */
  input: TObject;
  /** What arguments are checked against when it differs from `input` (complete: the contract decides the payload). */
  check?: TObject;
  /** The argument a task-scoped token may leave out: it defaults to the token's own task (advertised as optional). */
  own?: 'task_id' | 'parent_task_id';
  readOnly?: boolean;
  run: (args: any, call: ToolCall) => Promise<unknown> | unknown;
}

const d = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description });
const TaskId = d(Type.String({ maxLength: 64 }), 'Task id (may be left out with a token scoped to one task: that task)');
const props = <T extends TObject>(schema: T, ...drop: string[]) =>
  Object.fromEntries(Object.entries(schema.properties).filter(([k]) => !drop.includes(k))) as T['properties'];
const op = (name: string) => () => name;

/** A task as lists show it: enough to choose, `get_task` for the rest. */
export function summary(t: Task) {
  return { id: t.id, title: t.title, status: t.status, role: t.role, priority: t.priority, assigned_agent: t.assigned_agent, parent_task_id: t.parent_task_id, depends_on: t.depends_on, updated_at: t.updated_at };
}

const ListInput = Type.Object({
  status: Type.Optional(S.SearchQuery.properties.status),
  role: Type.Optional(Type.String()),
  parent_task_id: Type.Optional(d(Type.String({ maxLength: 64 }), 'Only the subtasks of this task')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});
const WaitInput = Type.Object({
  task_id: TaskId, ...props(S.TaskWaitForSubtasksRequest),
  wait_s: Type.Optional(d(Type.Number({ minimum: 0, maximum: 60 }), 'Seconds to wait for the subtasks to settle (0: park and return)')),
});

/** The task once `busy` no longer holds for it, else as it is after `ms` (or when the call is cancelled). */
function waitWhile(read: () => Task, busy: (t: Task) => boolean, ms: number, { board, signal }: ToolCall): Promise<Task> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer); off(); signal.removeEventListener('abort', done);
      try { resolve(read()); } catch (err) { reject(err); }
    };
    const timer = setTimeout(done, ms);
    const id = read().id;
    const off = board.onChange((t) => { if (t.id === id && !busy(t)) done(); });
    signal.addEventListener('abort', done, { once: true });
    // A change between the caller's read and the subscription above is not missed.
    if (!busy(read())) done();
  });
}

/** Every tool of the server, in the order clients list them. */
export const TOOLS: ToolDef[] = [
  {
    name: 'next_task', title: 'Claim the next task', operation: op('claim_next_task'),
    description: 'Claim the best open task of a role (priority, then age). With wait_s, waits up to that many seconds for one to appear. The task is yours: report progress, then complete or fail it.',
    input: Type.Object({ role: d(S.RoleParams.properties.role, 'Role of the task, e.g. backend'), ...props(S.NextQuery, 'tenant', 'parent_session_id') }),
    run: (a: { role: string; wait_s?: number; claimed_by_session?: string }, { board, caller, signal }) => board.next(a.role, { wait_s: a.wait_s, claimed_by_session: a.claimed_by_session }, caller, signal),
  },
  {
    name: 'get_task', title: 'Read a task', operation: op('get_task'), readOnly: true, own: 'task_id',
    description: 'One task with every field: description, status, dependencies, result and failure.',
    input: Type.Object({ task_id: TaskId }),
    run: (a: { task_id: string }, { board, caller }) => board.get(a.task_id, caller),
  },
  {
    name: 'list_tasks', title: 'List tasks', operation: op('list_tasks'), readOnly: true,
    description: 'Tasks of the board in creation order (summaries), filtered by status, role or parent, a page at a time.',
    input: ListInput,
    run: (a: { status?: string; role?: string; parent_task_id?: string; limit: number; offset: number }, { board, caller }) => {
      const all = board.tasks(caller, a.parent_task_id).filter((t) => (a.status === undefined || t.status === a.status) && (a.role === undefined || t.role === a.role));
      return { tasks: all.slice(a.offset, a.offset + a.limit).map(summary), total: all.length, limit: a.limit, offset: a.offset };
    },
  },
  {
    name: 'search_tasks', title: 'Search tasks', operation: op('search_tasks'), readOnly: true,
    description: 'Tasks whose title or description hold every word of q, with filters, sorting and pages (summaries).',
    input: Type.Object(props(S.SearchQuery, 'tenant')),
    run: async (a: S.SearchQuery, { board, caller }) => {
      const page = await board.search(a, caller);
      return { ...page, tasks: page.tasks.map(summary) };
    },
  },
  {
    name: 'report_progress', title: 'Report progress', operation: op('report_progress'), own: 'task_id',
    description: 'Tell the board how the work goes: a message, a percent, and counters (files changed, tests passing, errors) that stall detection compares. The first report starts a claimed task.',
    input: Type.Object({ task_id: TaskId, ...props(S.TaskProgressRequest) }),
    run: (a: S.TaskProgressRequest & { task_id: string }, { board, caller }) => {
      const { task_id, ...body } = a;
      return board.progress(task_id, body, caller);
    },
  },
  {
    name: 'complete_task', title: 'Complete a task', operation: op('complete_task'), own: 'task_id',
    description: 'Finish the task under the completion contract: result_summary in prose, or with a structured payload (outcome completed or refused, files_changed, commits, tests, notes). An empty summary or a payload that breaks the contract fails the task.',
    input: Type.Object({ task_id: TaskId, result_summary: d(S.TaskCompleteRequest.properties.result_summary, 'What you did, for people'), payload: Type.Optional({ ...S.CompletionPayload, $id: undefined }) }),
    check: Type.Object({ task_id: TaskId, ...props(S.TaskCompleteRequest) }),
    run: (a: { task_id: string; result_summary: string; payload?: Record<string, unknown> }, { board, caller }) =>
      board.complete(a.task_id, { result_summary: a.result_summary, ...(a.payload !== undefined ? { payload: a.payload } : {}) }, caller),
  },
  {
    name: 'fail_task', title: 'Fail a task', operation: op('task_fail'), own: 'task_id',
    description: 'Give up on the task with the reason; retries follow the task\'s max_retries.',
    input: Type.Object({ task_id: TaskId, reason: Type.Optional(S.TaskFailRequest.properties.reason) }),
    run: (a: { task_id: string; reason?: string }, { board, caller }) => board.fail(a.task_id, a.reason, caller),
  },
  {
    name: 'release_task', title: 'Release a task', operation: op('task_release'), own: 'task_id',
    description: 'Hand a claimed task back to the board (open again) without failing it.',
    input: Type.Object({ task_id: TaskId, ...props(S.TaskReleaseRequest) }),
    run: (a: { task_id: string; reason?: string }, { board, caller }) => board.release(a.task_id, a.reason, caller),
  },
  {
    name: 'create_subtask', title: 'Create a subtask', operation: op('self_create_task'), own: 'parent_task_id',
    description: 'Split work off into a subtask of a task (default: yours); the parent then waits for its subtasks, and completes when they all do.',
    input: Type.Object({ ...props(S.TaskSelfCreate, 'tenant', 'chat_context', 'parent_session_id', 'cell_id', 'parent_task_id'), parent_task_id: d(S.TaskSelfCreate.properties.parent_task_id, 'The parent task (may be left out with a token scoped to one task: that task)') }),
    run: (a: S.TaskSelfCreate, { board, caller }) => board.subtask(a, caller),
  },
  {
    name: 'wait_for_subtasks', title: 'Wait for subtasks', operation: op('task_wait_for_subtasks'), own: 'task_id',
    description: 'Park the task until its subtasks finish (creating a subtask already does), and optionally wait up to wait_s seconds for that. The parent completes by itself when every subtask succeeded, or is blocked naming those that did not.',
    input: WaitInput,
    run: async (a: { task_id: string; subtask_count?: number; wait_s?: number }, call) => {
      const { board, caller } = call;
      let task = board.get(a.task_id, caller);
      if (task.status === 'claimed' || task.status === 'in_progress') task = await board.park(a.task_id, a.subtask_count, caller);
      if (task.status === 'waiting_for_subtasks' && a.wait_s) {
        task = await waitWhile(() => board.get(a.task_id, caller), (t) => t.status === 'waiting_for_subtasks', a.wait_s * 1000, call);
      }
      return { task, settled: task.status !== 'waiting_for_subtasks', subtasks: board.tasks(caller, a.task_id).map(summary) };
    },
  },
  {
    name: 'task_graph', title: 'Dependency graph', operation: (a) => (a.task_id === undefined ? 'task_graph' : 'task_graph_neighbors'), readOnly: true,
    description: 'The dependency graph of the board (critical path, parallel width, bottlenecks), or with task_id the tasks directly upstream and downstream of one task.',
    input: Type.Object({ task_id: Type.Optional(d(Type.String({ maxLength: 64 }), 'Only the neighbours of this task')) }),
    run: (a: { task_id?: string }, { board, caller }) => board.graph(caller, a.task_id),
  },
  {
    name: 'board_status', title: 'Board status', operation: op('count_tasks'), readOnly: true,
    description: 'How many tasks are in each state, and how many open tasks each role has.',
    input: Type.Object({}),
    run: (_a: unknown, { board, caller }) => {
      const open: Record<string, number> = {};
      for (const t of board.tasks(caller)) if (t.status === 'open') open[t.role] = (open[t.role] ?? 0) + 1;
      return { counts: board.counts(caller), open_by_role: open };
    },
  },
];
