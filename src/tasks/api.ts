// The tasks domain as the rest of the server sees it: one narrow interface. The board, the store and the
// service's deps stay inside src/tasks; agents, webhooks, observe and the CLI hold a `Tasks`.
import type { Actor } from '../lib/route.ts';
import type { NextOptions } from './claims.ts';
import type { TaskOp } from './machine.ts';
import type { ProgressReport } from './progress.ts';
import type { Task, TaskCounts, TaskCreate, TaskProgressRequest, TaskSelfCreate, TaskStatus } from './schema.ts';
import type { ApplyOptions, PatchFields } from './service.ts';

/** How a claim by id is made: the session that holds it, compare-and-set, and the orchestrator's fields. */
export interface ClaimOptions {
  claimed_by_session?: string;
  expectedVersion?: number;
  agent_id?: string;
  node_id?: string;
  /** The agent branch the orchestrator will merge (its own sessions only). */
  branch?: string;
}

/** Which tasks `list` returns (every one when empty), in creation order. */
export interface TaskFilter {
  tenant?: string;
  status?: TaskStatus | readonly TaskStatus[];
  /** Only open tasks whose dependencies are satisfied (claimable now). */
  ready?: boolean;
  /** Only the children of this task. */
  parent?: string;
}

/** What a worker reports when it completes a task (the completion contract judges it). */
export interface Completion {
  result_summary: string;
  payload?: Record<string, unknown>;
}

/** A ready task taken off its queue for the orchestrator: claim it, or `release` it to queue it again. */
export interface Reservation {
  readonly task: Task;
  release(): void;
}

/** The task board: every read and write other domains make. Refusals are the domain errors of errors.ts. */
export interface Tasks {
  /** Create one task (quota, dependencies, parent; Draining while draining). */
  create(input: TaskCreate, who: Actor): Promise<Task>;
  /** Claim a task by id (VersionConflict, TransitionRefused, ClaimBlocked). */
  claim(id: string, opts: ClaimOptions, who: Actor): Promise<Task>;
  /** Claim the best open task of a role, waiting up to `wait_s` (NoOpenTask). */
  next(role: string, opts: NextOptions, who: Actor, signal?: AbortSignal): Promise<Task>;
  /** Complete under the completion contract: done, refused, or failed with a 422 carrying the failed task. */
  complete(id: string, body: Completion, who: Actor): Promise<Task>;
  /** Append a progress report (the first one starts a claimed task). */
  reportProgress(id: string, body: TaskProgressRequest, who: Actor): Promise<Task>;
  /** Create a subtask under a parent of the caller's tenant, parking the parent when it should split. */
  createSubtask(input: TaskSelfCreate, who: Actor): Promise<Task>;
  /** Apply one state-machine operation (audit, archive and parent roll-up with it). */
  apply(id: string, op: TaskOp, input: Record<string, unknown>, who: Actor, opts?: ApplyOptions): Promise<Task>;
  /** Change role, priority, model, metadata, title or description; no transition. */
  patch(id: string, fields: PatchFields, who: Actor, opts?: { check?: (t: Task) => void }): Promise<Task>;
  /** A task of any tenant (the server's own work), or undefined. */
  get(id: string): Task | undefined;
  /** The task if the tenant may see it, else TaskNotFound. */
  visible(id: string, tenant: string): Task;
  list(filter?: TaskFilter): Task[];
  /** Every task in no particular order: a pass over the whole board without the creation-order sort `list()` makes once (0.2 s at 100k tasks). */
  each(): Iterable<Task>;
  /** Counts per status plus total, for one tenant or all. */
  counts(tenant?: string): TaskCounts;
  /**
   * For a metrics scrape, without a pass over the board: tasks per status and role (a count may be 0), and
   * claimable tasks per role (open, dependencies satisfied, not being claimed right now).
   */
  tally(): { byStatusRole: ReadonlyMap<TaskStatus, ReadonlyMap<string, number>>; readyByRole: Map<string, number> };
  /** Progress of the task's current run (entries, latest snapshot, vector, stalled). */
  progress(id: string, who: Actor): Promise<ProgressReport>;
  /** Called with every task after it changes; returns the unsubscribe function. */
  onChange(fn: (task: Task) => void): () => void;
  /** Refuse (true) or accept again (false) creations and claims. */
  drain(on: boolean): void;
  readonly draining: boolean;
  /** Take the best ready task of (role, tenant) off its queue for the orchestrator, or undefined. */
  reserveNext(role: string, tenant: string): Reservation | undefined;
  /** Number of tasks on the board. */
  readonly size: number;
}
