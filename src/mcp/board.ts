// The MCP layer's only door to the task board: every call into src/tasks is in this file, and it goes through
// the narrow `Tasks` of src/tasks/index.ts (a change of that interface is an edit here alone). Reads whose logic the
// tasks domain keeps inside its route records (search, graph, gate report) run those records' handlers.
import type { IncomingMessage } from 'node:http';
import type { Route, RouteContext } from '../lib/route.ts';
import type { Principal } from '../lib/route.ts';
import type { Actor, SearchQuery, Task, TaskCounts, TaskProgressRequest, TaskSelfCreate, Tasks } from '../tasks/index.ts';

export type { Actor, Task } from '../tasks/index.ts';
/** The API shapes the tool schemas are built from (one schema per shape). */
export {
  NextQuery, RoleParams, SearchQuery, TaskCompleteRequest, CompletionPayload, TaskFailRequest, TaskProgressRequest,
  TaskReleaseRequest, TaskSelfCreate, TaskWaitForSubtasksRequest, TASK_SCHEMAS, TASK_STATUSES,
} from '../tasks/index.ts';

/** Who calls: the authenticated principal and the tenant it acts in. */
export interface Caller {
  principal: Principal;
  who: Actor;
}

/** What the MCP tools and resources need from the board. */
export interface McpBoard {
  /** Access level and task scope of an API operation (the tool or resource mirrors it). */
  operation(operationId: string): Pick<Route, 'access' | 'taskScope'>;
  /** The caller of one /mcp request: its credential and who acts (resolved by the server pipeline). */
  caller(principal: Principal, who: Actor): Caller;
  next(role: string, opts: { wait_s?: number; claimed_by_session?: string }, c: Caller, signal?: AbortSignal): Promise<Task>;
  get(id: string, c: Caller): Task;
  /** Tasks of the caller's tenant in creation order, or the children of one task. */
  tasks(c: Caller, parentId?: string): readonly Task[];
  search(query: SearchQuery, c: Caller): Promise<{ tasks: Task[]; total: number; page: number; per_page: number; total_pages: number }>;
  progress(id: string, body: TaskProgressRequest, c: Caller): Promise<Task>;
  complete(id: string, body: { result_summary: string; payload?: Record<string, unknown> }, c: Caller): Promise<Task>;
  fail(id: string, reason: string | undefined, c: Caller): Promise<Task>;
  release(id: string, reason: string | undefined, c: Caller): Promise<Task>;
  subtask(body: TaskSelfCreate, c: Caller): Promise<Task>;
  /** Park a claimed or running task until its subtasks finish (op wait). */
  park(id: string, subtaskCount: number | undefined, c: Caller): Promise<Task>;
  graph(c: Caller, taskId?: string): Promise<unknown>;
  counts(c: Caller): TaskCounts;
  gates(id: string, c: Caller): Promise<unknown>;
  /** Called after every change of a task; returns the unsubscribe function. */
  onChange(fn: (t: Task) => void): () => void;
}

export interface BoardDeps {
  tasks: Tasks;
  /** The server's mounted routes (access and task scope of each operation; the read handlers). */
  routes: readonly Route[];
  /** Told about every progress report, as the API's progress route tells the board feed. */
  onProgress?: (task: Task, body: TaskProgressRequest) => void;
}

/** The door over the server's `Tasks` and route records. */
export function createBoard(deps: BoardDeps): McpBoard {
  const { tasks } = deps;
  const byOp = new Map(deps.routes.map((r) => [r.operationId, r]));
  const route = (op: string): Route => {
    const r = byOp.get(op);
    if (!r) throw new Error(`MCP: the API has no operation '${op}'`);
    return r;
  };
  // A read route's handler called in-process, as the API would after validation and the access check.
  const read = async (op: string, c: Caller, params: Record<string, string>, query: Record<string, unknown>): Promise<unknown> => {
    const req = { headers: { 'x-tenant-id': c.who.tenant }, query: {} } as unknown as IncomingMessage;
    const ctx = { req, res: undefined, params, query, body: undefined, principal: c.principal, who: c.who, requestId: 'mcp', ip: '' };
    return route(op).handler(ctx as unknown as RouteContext<never, never, never>);
  };
  return {
    operation: (op) => { const r = route(op); return { access: r.access, ...(r.taskScope ? { taskScope: r.taskScope } : {}) }; },
    caller: (principal, who) => ({ principal, who }),
    next: (role, opts, c, signal) => tasks.next(role, opts, c.who, signal),
    get: (id, c) => tasks.visible(id, c.who.tenant),
    tasks: (c, parentId) => (parentId === undefined ? tasks.list({ tenant: c.who.tenant }) : tasks.list({ parent: tasks.visible(parentId, c.who.tenant).id })),
    search: (query, c) => read('search_tasks', c, {}, query) as never,
    progress: async (id, body, c) => {
      const task = await tasks.reportProgress(id, body, c.who);
      deps.onProgress?.(task, body);
      return task;
    },
    complete: (id, body, c) => tasks.complete(id, body, c.who),
    fail: (id, reason, c) => tasks.apply(id, 'fail', { reason }, c.who),
    release: (id, reason, c) => tasks.apply(id, 'release', { reason }, c.who),
    subtask: (body, c) => tasks.createSubtask(body, c.who),
    park: (id, subtaskCount, c) => tasks.apply(id, 'wait', subtaskCount === undefined ? {} : { subtask_count: subtaskCount }, c.who),
    graph: (c, taskId) => (taskId === undefined ? read('task_graph', c, {}, {}) : read('task_graph_neighbors', c, { task_id: taskId }, {})),
    counts: (c) => tasks.counts(c.who.tenant),
    gates: (id, c) => read('get_gate_report', c, { task_id: id }, {}),
    onChange: (fn) => tasks.onChange(fn),
  };
}
