// Longer than 200 lines on purpose: every task-domain shape lives here so the OpenAPI components come from one file.
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '../lib/typebox.ts';

/** Task states of DECISIONS.md (Tasks, States and transitions). */
export const TASK_STATUSES = [
  'open', 'claimed', 'in_progress', 'done', 'failed', 'closed',
  'blocked', 'waiting_for_subtasks', 'refused', 'cancelled',
] as const;
export const FAILURE_TYPES = ['failed', 'missing_summary', 'contract_violation', 'agent_exit', 'gate_failed'] as const;
export const SEARCH_SORTS = ['created_at', 'priority', 'title', 'role', 'status'] as const;
/** A status filter value of clients of the original server that no task here ever has: it answers an empty list. */
export const LEGACY_FILTER_STATUSES = ['orphaned'] as const;

const literals = <T extends string>(values: readonly T[], opts: object = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)), opts) as TUnion<TLiteral<T>[]>;
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Id = Type.String({ pattern: '^[0-9a-z][0-9a-z_-]{0,63}$' });
const RolePattern = '^[a-z][a-z0-9_-]{0,63}$';
const Text = (max = 1000) => Type.String({ maxLength: max });
const Count = Type.Integer({ minimum: 0 });
const JsonObject = Type.Record(Type.String(), Type.Unknown());
// Inline (no $id) status union for use inside other shapes; TaskStatus below is the named component.
const statusUnion = (opts: object = {}) => literals(TASK_STATUSES, opts);
// A status as a list filter: every state, plus the legacy values (matching nothing).
const statusFilter = () => literals([...TASK_STATUSES, ...LEGACY_FILTER_STATUSES]);

export const TaskStatus = statusUnion({ $id: 'TaskStatus' });
export type TaskStatus = Static<typeof TaskStatus>;
export const FailureType = literals(FAILURE_TYPES, { $id: 'FailureType' });
export type FailureType = Static<typeof FailureType>;

const Failure = Type.Object({
  type: literals(FAILURE_TYPES),
  reason: Type.String(),
  path: Type.Optional(Type.String()),
});
export type Failure = Static<typeof Failure>;

const ChatContext = Type.Object({
  channel_id: Type.Optional(Text()), user_id: Type.Optional(Text()),
  thread_ts: Type.Optional(Text()), response_url: Type.Optional(Text(4096)),
});
export type ChatContext = Static<typeof ChatContext>;

export const Task = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  role: Type.String(),
  priority: Type.Integer(),
  scope: literals(['small', 'medium', 'large'] as const),
  complexity: literals(['low', 'medium', 'high'] as const),
  status: statusUnion(),
  assigned_agent: Nullable(Type.String()),
  claimed_by_session: Nullable(Type.String()),
  parent_session_id: Nullable(Type.String()),
  parent_task_id: Nullable(Type.String()),
  depends_on: Type.Array(Type.String()),
  owned_files: Type.Array(Type.String()),
  cell_id: Nullable(Type.String()),
  tenant: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  estimated_minutes: Type.Number(),
  model: Nullable(Type.String()),
  result_summary: Nullable(Type.String()),
  failure: Nullable(Failure),
  /** Why the task entered its current state (block, unblock, cancel, release, reopen, split); null when none given. */
  status_reason: Nullable(Type.String()),
  /** The agent branch the orchestrator gates and merges once the task is done; null when the work has none (a person or client did it). */
  branch: Nullable(Type.String()),
  metadata: JsonObject,
  chat_context: Nullable(ChatContext),
  node_id: Nullable(Type.String()),
  retry_count: Count,
  max_retries: Count,
  /** Number of claims so far; with claimed_by_session it names the current run. */
  claim_count: Count,
  created_at: Type.String(),
  updated_at: Type.String(),
  claimed_at: Nullable(Type.String()),
  /** Set when the task reaches done, refused, failed or cancelled. */
  completed_at: Nullable(Type.String()),
}, { $id: 'Task' });
export type Task = Static<typeof Task>;

const createProps = {
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Type.Optional(Type.String({ maxLength: 100_000, default: '' })),
  role: Type.Optional(Type.String({ pattern: RolePattern, default: 'backend' })),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 2 })),
  scope: Type.Optional(literals(['small', 'medium', 'large'] as const, { default: 'medium' })),
  complexity: Type.Optional(literals(['low', 'medium', 'high'] as const, { default: 'medium' })),
  depends_on: Type.Optional(Type.Array(Id, { maxItems: 100, default: [] })),
  owned_files: Type.Optional(Type.Array(Text(4096), { maxItems: 100, default: [] })),
  estimated_minutes: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 30 })),
  max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 2 })),
  metadata: Type.Optional(JsonObject),
  chat_context: Type.Optional(Nullable(ChatContext)),
  parent_task_id: Type.Optional(Nullable(Text(64))),
  parent_session_id: Type.Optional(Nullable(Text())),
  cell_id: Type.Optional(Nullable(Text())),
  model: Type.Optional(Nullable(Text())),
  tenant: Type.Optional(Text(64)),
};
// Unknown keys are ignored (no additionalProperties:false), as DECISIONS.md asks.
export const TaskCreate = Type.Object(createProps, { $id: 'TaskCreate' });
export type TaskCreate = Static<typeof TaskCreate>;
export const TaskSelfCreate = Type.Object({ ...createProps, parent_task_id: Text(64) }, { $id: 'TaskSelfCreate' });
export type TaskSelfCreate = Static<typeof TaskSelfCreate>;

/** True when `obj` serialises to more than 50,000 bytes of JSON (the metadata cap). */
export function metadataTooLarge(obj: unknown): boolean {
  return Buffer.byteLength(JSON.stringify(obj ?? {}), 'utf8') > 50_000;
}

export const BatchCreateRequest = Type.Object({ tasks: Type.Array(Type.Ref(TaskCreate), { maxItems: 1000 }) }, { $id: 'BatchCreateRequest' });
export type BatchCreateRequest = Static<typeof BatchCreateRequest>;
export const BatchCreateResponse = Type.Object({
  created: Type.Array(Type.Ref(Task)), skipped_titles: Type.Array(Type.String()),
}, { $id: 'BatchCreateResponse' });
export type BatchCreateResponse = Static<typeof BatchCreateResponse>;

export const BatchClaimRequest = Type.Object({
  task_ids: Type.Array(Id, { minItems: 1, maxItems: 100 }),
  agent_id: Type.Optional(Text()),
  claimed_by_session: Type.Optional(Text()),
}, { $id: 'BatchClaimRequest' });
export type BatchClaimRequest = Static<typeof BatchClaimRequest>;
/** All or nothing: either every id is claimed (failed = []) or none is (claimed = [], failed names each blocker). */
export const BatchClaimResponse = Type.Object({
  claimed: Type.Array(Type.Ref(Task)),
  failed: Type.Array(Type.Object({ task_id: Type.String(), reason: Type.String() })),
}, { $id: 'BatchClaimResponse' });
export type BatchClaimResponse = Static<typeof BatchClaimResponse>;

export const TaskCompleteRequest = Type.Object({
  result_summary: Type.String({ maxLength: 100_000 }),
  payload: Type.Optional(JsonObject),
}, { $id: 'TaskCompleteRequest' });
export type TaskCompleteRequest = Static<typeof TaskCompleteRequest>;

const strict = { additionalProperties: false } as const;
/** The worker completion contract; refusal.reason is also required when outcome is refused (contract.ts). */
export const CompletionPayload = Type.Object({
  outcome: literals(['completed', 'refused'] as const),
  files_changed: Type.Optional(Type.Array(Type.String())),
  commits: Type.Optional(Type.Array(Type.String())),
  tests: Type.Optional(Type.Object({ passed: Count, failed: Count, skipped: Type.Optional(Count) }, strict)),
  refusal: Type.Optional(Type.Object({ reason: Type.Optional(Type.String({ minLength: 1 })), category: Type.Optional(Type.String()) }, strict)),
  notes: Type.Optional(Type.String()),
}, { ...strict, $id: 'CompletionPayload' });
export type CompletionPayload = Static<typeof CompletionPayload>;

const reasonBody = (id: string) => Type.Object({ reason: Type.Optional(Text(100_000)) }, { $id: id });
export const TaskWaitForSubtasksRequest = Type.Object({ subtask_count: Type.Optional(Count) }, { $id: 'TaskWaitForSubtasksRequest' });
export type TaskWaitForSubtasksRequest = Static<typeof TaskWaitForSubtasksRequest>;
export const TaskFailRequest = Type.Object({ reason: Type.Optional(Text(100_000)), error: Type.Optional(Text(100_000)) }, { $id: 'TaskFailRequest' });
export type TaskFailRequest = Static<typeof TaskFailRequest>;
export const TaskReleaseRequest = reasonBody('TaskReleaseRequest');
export type TaskReleaseRequest = Static<typeof TaskReleaseRequest>;
export const TaskReopenRequest = reasonBody('TaskReopenRequest');
export type TaskReopenRequest = Static<typeof TaskReopenRequest>;
export const TaskCancelRequest = reasonBody('TaskCancelRequest');
export type TaskCancelRequest = Static<typeof TaskCancelRequest>;
export const TaskBlockRequest = reasonBody('TaskBlockRequest');
export type TaskBlockRequest = Static<typeof TaskBlockRequest>;
export const TaskUnblockRequest = reasonBody('TaskUnblockRequest');
export type TaskUnblockRequest = Static<typeof TaskUnblockRequest>;
/** `merged: true` closes a blocked task whose work a person merged by hand (a merge conflict). */
export const TaskCloseRequest = Type.Object({ merged: Type.Optional(Type.Boolean()), reason: Type.Optional(Text(100_000)) }, { $id: 'TaskCloseRequest' });
export type TaskCloseRequest = Static<typeof TaskCloseRequest>;

export const TaskProgressRequest = Type.Object({
  message: Type.Optional(Text(10_000)),
  percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  files_changed: Type.Optional(Count),
  tests_passing: Type.Optional(Count),
  errors: Type.Optional(Count),
  last_file: Type.Optional(Text(4096)),
}, { $id: 'TaskProgressRequest' });
export type TaskProgressRequest = Static<typeof TaskProgressRequest>;
export const ProgressEntry = Type.Object({
  ts: Type.String(), run_id: Nullable(Type.String()),
  message: Nullable(Type.String()), percent: Nullable(Type.Number()),
}, { $id: 'ProgressEntry' });
export type ProgressEntry = Static<typeof ProgressEntry>;
export const SnapshotEntry = Type.Object({
  ts: Type.String(), run_id: Nullable(Type.String()),
  files_changed: Type.Integer(), tests_passing: Type.Integer(), errors: Type.Integer(),
  last_file: Nullable(Type.String()),
}, { $id: 'SnapshotEntry' });
export type SnapshotEntry = Static<typeof SnapshotEntry>;
const Vector = Type.Object({ files_changed: Type.Integer(), tests_passing: Type.Integer(), errors: Type.Integer() });
/** latest = the newest snapshot of the current run (null when none). */
export const TaskProgressResponse = Type.Object({
  task_id: Type.String(), run_id: Nullable(Type.String()),
  entries: Type.Array(Type.Ref(ProgressEntry)), latest: Nullable(Type.Ref(SnapshotEntry)),
  vector: Vector, stalled: Type.Boolean(),
}, { $id: 'TaskProgressResponse' });
export type TaskProgressResponse = Static<typeof TaskProgressResponse>;

export const TaskPatchRequest = Type.Object({
  role: Type.Optional(Type.String({ pattern: RolePattern })),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  model: Type.Optional(Nullable(Text())),
}, { $id: 'TaskPatchRequest' });
export type TaskPatchRequest = Static<typeof TaskPatchRequest>;

export const ListQuery = Type.Object({
  status: Type.Optional(statusFilter()), cell_id: Type.Optional(Type.String()), tenant: Type.Optional(Type.String()),
  claimed_by_session: Type.Optional(Type.String()), parent_session_id: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })), offset: Type.Optional(Count),
}, { $id: 'ListQuery' });
export type ListQuery = Static<typeof ListQuery>;
export const SearchQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  sort: literals(SEARCH_SORTS, { default: 'created_at' }),
  order: literals(['asc', 'desc'] as const, { default: 'desc' }),
  status: Type.Optional(statusFilter()), role: Type.Optional(Type.String()), assigned_agent: Type.Optional(Type.String()),
  tenant: Type.Optional(Type.String()),
  /** Words that must all appear in the title or description (case-insensitive). */
  q: Type.Optional(Type.String({ maxLength: 1000 })),
  /** Tasks whose id starts with this (the CLI's short ids). */
  id_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** false: only tasks that can still change (not failed, closed, refused, cancelled); true: only those. */
  terminal: Type.Optional(Type.Boolean()),
}, { $id: 'SearchQuery' });
export type SearchQuery = Static<typeof SearchQuery>;
export const NextQuery = Type.Object({
  claimed_by_session: Type.Optional(Type.String()), parent_session_id: Type.Optional(Type.String()),
  wait_s: Type.Optional(Type.Number({ minimum: 0, maximum: 60 })), tenant: Type.Optional(Type.String()),
}, { $id: 'NextQuery' });
export type NextQuery = Static<typeof NextQuery>;
export const ClaimQuery = Type.Object({
  expected_version: Type.Optional(Type.Integer({ minimum: 0 })), claimed_by_session: Type.Optional(Type.String()),
  tenant: Type.Optional(Type.String()),
}, { $id: 'ClaimQuery' });
export type ClaimQuery = Static<typeof ClaimQuery>;
/**
 * `?next=<role>` on complete and fail: claim the next open task of that role in the same request, for the
 * finished task's session, or for `next_session` (a worker runs each task in a session of its own).
 */
export const FinishQuery = Type.Object({
  next: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  next_session: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The session the next task is claimed for (default: the finished task\'s)' })),
  tenant: Type.Optional(Type.String()),
}, { $id: 'FinishQuery' });
export type FinishQuery = Static<typeof FinishQuery>;
/** The answer of a fused cycle: the finished task and the next one claimed for the same session (null: none). */
export const CycleResponse = Type.Object({
  completed: Type.Ref(Task), next: Type.Union([Type.Ref(Task), Type.Null()]),
}, { $id: 'CycleResponse' });
export type CycleResponse = Static<typeof CycleResponse>;
export const CountsQuery = Type.Object({ tenant: Type.Optional(Type.String()) }, { $id: 'CountsQuery' });
export type CountsQuery = Static<typeof CountsQuery>;
export const ArchiveQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 50 }), tenant: Type.Optional(Type.String()),
}, { $id: 'ArchiveQuery' });
export type ArchiveQuery = Static<typeof ArchiveQuery>;

export const PaginatedTasks = Type.Object({
  tasks: Type.Array(Type.Ref(Task)), total: Count, limit: Type.Integer(), offset: Count,
}, { $id: 'PaginatedTasks' });
export type PaginatedTasks = Static<typeof PaginatedTasks>;
export const SearchResponse = Type.Object({
  tasks: Type.Array(Type.Ref(Task)), total: Count, page: Type.Integer(), per_page: Type.Integer(),
  total_pages: Type.Integer(), sort: literals(SEARCH_SORTS), order: literals(['asc', 'desc'] as const),
}, { $id: 'SearchResponse' });
export type SearchResponse = Static<typeof SearchResponse>;
export const TaskCounts = Type.Object(
  { ...Object.fromEntries(TASK_STATUSES.map((s) => [s, Count])) as Record<TaskStatus, typeof Count>, total: Count },
  { $id: 'TaskCounts' },
);
export type TaskCounts = Static<typeof TaskCounts>;
export const ArchiveRecord = Type.Object({
  task_id: Type.String(), title: Type.String(), role: Type.String(), tenant: Type.String(), status: statusUnion(),
  created_at: Type.String(), completed_at: Nullable(Type.String()), duration_s: Nullable(Type.Number()),
  result_summary: Nullable(Type.String()), assigned_agent: Nullable(Type.String()), claimed_by_session: Nullable(Type.String()),
}, { $id: 'ArchiveRecord' });
export type ArchiveRecord = Static<typeof ArchiveRecord>;

export const TaskGraph = Type.Object({
  nodes: Type.Array(Type.Object({
    id: Type.String(), role: Type.String(), status: statusUnion(), estimated_minutes: Type.Number(), title: Type.String(),
  })),
  edges: Type.Array(Type.Object({
    from: Type.String(), to: Type.String(),
    type: literals(['depends_on', 'parent'] as const), semantic_type: literals(['blocks', 'informs'] as const),
  })),
  critical_path: Type.Array(Type.String()),
  critical_path_minutes: Type.Number(),
  parallel_width: Count,
  bottlenecks: Type.Array(Type.String()),
}, { $id: 'TaskGraph' });
export type TaskGraph = Static<typeof TaskGraph>;
export const GraphNeighbors = Type.Object({
  task_id: Type.String(), upstream: Type.Array(Type.Ref(Task)), downstream: Type.Array(Type.Ref(Task)),
}, { $id: 'GraphNeighbors' });
export type GraphNeighbors = Static<typeof GraphNeighbors>;

export const GateReport = Type.Object({
  task_id: Type.String(), session_id: Nullable(Type.String()), overall_pass: Type.Boolean(),
  results: Type.Array(Type.Object({
    name: Type.String(), command: Type.String(), required: Type.Boolean(),
    status: literals(['pass', 'fail', 'timeout', 'error'] as const),
    exit_code: Nullable(Type.Integer()), duration_ms: Type.Number(), output_tail: Type.String(),
  })),
  started_at: Type.String(), finished_at: Type.String(),
}, { $id: 'GateReport' });
export type GateReport = Static<typeof GateReport>;
export const PartialMergeRequest = Type.Object({
  files: Type.Array(Text(4096), { minItems: 1, maxItems: 1000 }), message: Type.Optional(Text(10_000)),
}, { $id: 'PartialMergeRequest' });
export type PartialMergeRequest = Static<typeof PartialMergeRequest>;
export const PartialMergeResponse = Type.Object({
  task_id: Type.String(), session_id: Type.String(),
  merged_files: Type.Array(Type.String()), skipped_already_merged: Type.Array(Type.String()),
  uncommitted_files: Type.Array(Type.String()), conflicting_files: Type.Array(Type.String()),
  commit_sha: Nullable(Type.String()),
}, { $id: 'PartialMergeResponse' });
export type PartialMergeResponse = Static<typeof PartialMergeResponse>;

// Path parameters are plain strings: an id that does not match ID_PATTERN answers 404 (TaskNotFound from visible()), not 422.
export const TaskIdParams = Type.Object({ task_id: Type.String() }, { $id: 'TaskIdParams' });
export type TaskIdParams = Static<typeof TaskIdParams>;
export const RoleParams = Type.Object({ role: Type.String() }, { $id: 'RoleParams' });
export type RoleParams = Static<typeof RoleParams>;

/** Every named shape, for OpenAPI components and as `refs` of TypeCompiler.Compile / Value.Parse (Type.Ref targets). */
export const TASK_SCHEMAS: TSchema[] = [
  TaskStatus, FailureType, Task, TaskCreate, TaskSelfCreate, BatchCreateRequest, BatchCreateResponse,
  BatchClaimRequest, BatchClaimResponse, TaskCompleteRequest, CompletionPayload, TaskWaitForSubtasksRequest,
  TaskFailRequest, TaskReleaseRequest, TaskReopenRequest, TaskCancelRequest, TaskBlockRequest, TaskUnblockRequest, TaskCloseRequest,
  TaskProgressRequest, ProgressEntry, SnapshotEntry, TaskProgressResponse, TaskPatchRequest, ListQuery, SearchQuery,
  NextQuery, ClaimQuery, FinishQuery, CycleResponse, CountsQuery, ArchiveQuery, PaginatedTasks, SearchResponse, TaskCounts, ArchiveRecord,
  TaskGraph, GraphNeighbors, GateReport, PartialMergeRequest, PartialMergeResponse, TaskIdParams, RoleParams,
];

/** Ids, time and tenant a new task gets from the caller (the service), never from a clock here. */
export interface NewTaskContext { id: string; now: string; tenant: string }

/** A full open task from a validated create body, with every default of DECISIONS.md. */
// Frozen and shared by every task that has none: 100k empty metadata objects and lists cost 12 MiB of
// heap. A task is never changed in place (a change makes a new record), and frozen, nothing could.
const NO_ITEMS: string[] = Object.freeze([]) as unknown as string[];
const NO_METADATA: Record<string, unknown> = Object.freeze({});
const listOf = (items: readonly string[] | undefined): string[] => (items?.length ? [...new Set(items)] : NO_ITEMS);

// No own key (no Object.keys array: this runs at every change).
function isEmpty(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return false;
  return true;
}

/** A task record as read from its file, its empty lists and metadata the shared frozen ones (see above). */
export function compactTask(t: Task): Task {
  if (t.depends_on.length === 0) t.depends_on = NO_ITEMS;
  if (t.owned_files.length === 0) t.owned_files = NO_ITEMS;
  if (t.metadata !== NO_METADATA && isEmpty(t.metadata)) t.metadata = NO_METADATA;
  if (t.updated_at === t.created_at) t.updated_at = t.created_at; // one string for two equal times
  if (t.completed_at === t.updated_at) t.completed_at = t.updated_at; // a finished task: 4 MiB at 100k
  return t;
}

// An integer field's value as a small integer. A schema's default filled in by the validator comes as a boxed
// heap number (2.0), and one such value made `priority` and `max_retries` boxed doubles in every task (a heap
// number each: 4.6 MiB at 100k tasks, and one more allocation per change). Both are validated integers <= 1000.
const small = (n: number): number => n | 0;

/**
 * A new open task from what a client asked for, with its id, time and tenant. Its keys are in the order a
 * task file has (sorted), so its record and every record spread from it are written without a sort.
 */
export function newTask(create: TaskCreate, ctx: NewTaskContext): Task {
  return {
    assigned_agent: null, branch: null, cell_id: create.cell_id ?? null, chat_context: create.chat_context ?? null,
    claim_count: 0, claimed_at: null, claimed_by_session: null, completed_at: null,
    complexity: create.complexity ?? 'medium', created_at: ctx.now, depends_on: listOf(create.depends_on),
    description: create.description ?? '', estimated_minutes: create.estimated_minutes ?? 30, failure: null, id: ctx.id,
    max_retries: small(create.max_retries ?? 2),
    metadata: create.metadata && Object.keys(create.metadata).length ? { ...create.metadata } : NO_METADATA,
    model: create.model ?? null, node_id: null, owned_files: listOf(create.owned_files),
    parent_session_id: create.parent_session_id ?? null, parent_task_id: create.parent_task_id ?? null,
    priority: small(create.priority ?? 2), result_summary: null, retry_count: 0, role: create.role ?? 'backend',
    scope: create.scope ?? 'medium', status: 'open', status_reason: null, tenant: ctx.tenant, title: create.title,
    updated_at: ctx.now, version: 1,
  };
}

export function toArchiveRecord(task: Task): ArchiveRecord {
  const end = task.completed_at ?? task.updated_at;
  const seconds = (Date.parse(end) - Date.parse(task.created_at)) / 1000;
  return {
    task_id: task.id, title: task.title, role: task.role, tenant: task.tenant, status: task.status,
    created_at: task.created_at, completed_at: end,
    duration_s: Number.isFinite(seconds) ? Math.round(seconds * 1000) / 1000 : null,
    result_summary: task.result_summary, assigned_agent: task.assigned_agent, claimed_by_session: task.claimed_by_session,
  };
}

/** Batch title dedup key: trimmed, lower case. */
export const titleKey = (title: string): string => title.trim().toLowerCase();

/** Split a batch into items to create and titles to skip (already among `existing` keys, or repeated in the batch). */
export function dedupeBatch<T extends { title: string }>(items: readonly T[], existing: ReadonlySet<string>): { keep: T[]; skipped_titles: string[] } {
  const seen = new Set(existing);
  const keep: T[] = [];
  const skipped_titles: string[] = [];
  for (const item of items) {
    const key = titleKey(item.title);
    if (seen.has(key)) skipped_titles.push(item.title);
    else { seen.add(key); keep.push(item); }
  }
  return { keep, skipped_titles };
}
