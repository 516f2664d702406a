import { TransitionRefused } from './errors.ts';
import type { Failure, FailureType, Task, TaskStatus } from './schema.ts';

/** Every operation that moves a task between states. */
export type TaskOp =
  | 'claim' | 'start' | 'release' | 'complete' | 'refuse' | 'fail_summary' | 'fail_contract' | 'fail'
  | 'close' | 'block' | 'unblock' | 'wait' | 'split' | 'reopen' | 'cancel'
  // close {"merged": true}: a person merged the work of a blocked task by hand (merge conflict).
  | 'close_merged'
  // The orchestrator's verdicts on a done task (no HTTP route): required gates failed past the reopen budget, merge conflict.
  | 'gate_fail' | 'merge_block';

const WORKING_FAILS = { fail_summary: 'failed', fail_contract: 'failed', fail: 'failed' } as const;

/** The state machine of DECISIONS.md as one table: (state, op) -> next state; a missing pair answers 409. */
export const TRANSITIONS = {
  // complete from open: claimed for the caller and completed in one write (DECISIONS.md, clients of the original server).
  open: { claim: 'claimed', complete: 'done', fail: 'failed', block: 'blocked', split: 'waiting_for_subtasks', cancel: 'cancelled' },
  claimed: {
    start: 'in_progress', release: 'open', complete: 'done', refuse: 'refused', ...WORKING_FAILS,
    block: 'blocked', wait: 'waiting_for_subtasks', split: 'waiting_for_subtasks', cancel: 'cancelled',
  },
  in_progress: {
    release: 'open', complete: 'done', refuse: 'refused', ...WORKING_FAILS,
    block: 'blocked', wait: 'waiting_for_subtasks', split: 'waiting_for_subtasks', cancel: 'cancelled',
  },
  waiting_for_subtasks: { complete: 'done', fail: 'failed', block: 'blocked', cancel: 'cancelled' },
  blocked: { unblock: 'open', fail: 'failed', cancel: 'cancelled', close_merged: 'closed' },
  // done is not terminal (DECISIONS.md), so cancel applies to it as to any non-terminal state.
  done: { close: 'closed', close_merged: 'closed', reopen: 'open', cancel: 'cancelled', gate_fail: 'failed', merge_block: 'blocked' },
  failed: {},
  closed: {},
  refused: {},
  cancelled: {},
} as const satisfies Record<TaskStatus, Partial<Record<TaskOp, TaskStatus>>>;

/** The verb of the 409 detail, named after the endpoint that triggers the op. */
export const OP_VERB: Record<TaskOp, string> = {
  claim: 'claim', start: 'start', release: 'release', complete: 'complete', refuse: 'complete',
  fail_summary: 'complete', fail_contract: 'complete', fail: 'fail', close: 'close', block: 'block',
  unblock: 'unblock', wait: 'wait-for-subtasks', split: 'split', reopen: 'reopen', cancel: 'cancel',
  gate_fail: 'fail', merge_block: 'block', close_merged: 'close',
};

// Ops no client calls by their own verb (the orchestrator's, or a side effect of another call).
const INTERNAL_OPS: ReadonlySet<TaskOp> = new Set(['start', 'split', 'gate_fail', 'merge_block', 'refuse', 'fail_summary', 'fail_contract']);

/** The endpoint verbs a client may call on a task in `status`, as the 409 lists them. */
export function allowedVerbs(status: TaskStatus): string[] {
  const ops = Object.keys(TRANSITIONS[status]) as TaskOp[];
  const verbs = ops.filter((op) => !INTERNAL_OPS.has(op)).map((op) => (op === 'close_merged' && status !== 'done' ? 'close (merged: true)' : OP_VERB[op]));
  return [...new Set(verbs)];
}

/** States nothing leaves. */
export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['failed', 'closed', 'refused', 'cancelled']);
/** Non-terminal and not done: what counts against a tenant's quota. */
export const ACTIVE: ReadonlySet<TaskStatus> = new Set(['open', 'claimed', 'in_progress', 'blocked', 'waiting_for_subtasks']);
/** Being worked on: holds its owned_files. */
export const WORKING: ReadonlySet<TaskStatus> = new Set(['claimed', 'in_progress']);
/** A dependency in one of these states is satisfied (but see depSatisfied: done work on an agent branch waits for its merge). */
export const SATISFIED: ReadonlySet<TaskStatus> = new Set(['done', 'closed']);

/**
 * True when a dependent may start on top of `dep`: closed, or done with no agent branch (a person or client
 * completed it). Done work on an agent branch is not in the base until the orchestrator merged it and closed the task.
 */
export function depSatisfied(dep: Pick<Task, 'status' | 'branch'>): boolean {
  return dep.status === 'closed' || (dep.status === 'done' && !dep.branch);
}

/** True for failed, closed, refused, cancelled. */
export const isTerminal = (s: TaskStatus): boolean => TERMINAL.has(s);
/** True for states counted against the quota (non-terminal, not done). */
export const isActive = (s: TaskStatus): boolean => ACTIVE.has(s);

/** Inputs an op may use; field names follow the request bodies. Unused fields are ignored. */
export interface TransitionInput {
  claimed_by_session?: string | null;
  assigned_agent?: string | null;
  node_id?: string | null;
  result_summary?: string | null;
  payload?: Record<string, unknown>;
  reason?: string | null;
  /** Alias of reason on fail (TaskFailRequest.error). */
  error?: string | null;
  /** JSON pointer of the contract violation (fail_contract). */
  path?: string;
  /** Failure type for fail; default 'failed' (the orchestrator uses agent_exit, gate_failed). */
  failure_type?: FailureType;
  subtask_count?: number;
  /** release: count this release as a retry (retry_count + 1). */
  count_retry?: boolean;
  /** claim: the agent branch the orchestrator will merge (its own sessions only). */
  branch?: string | null;
}

/** The target state of (status, op), or undefined when the table has no such pair. */
export function target(status: TaskStatus, op: TaskOp): TaskStatus | undefined {
  return (TRANSITIONS[status] as Partial<Record<TaskOp, TaskStatus>>)[op];
}

/** The refusal of a disallowed (state, op) pair; it names what the state allows. */
export function invalidTransition(task: Pick<Task, 'id' | 'status'>, op: TaskOp): TransitionRefused {
  const verbs = allowedVerbs(task.status);
  const allowed = verbs.length ? `allowed: ${verbs.join(', ')}` : `'${task.status}' is terminal`;
  return new TransitionRefused('transition_refused', `Cannot ${OP_VERB[op]} task '${task.id}' in state '${task.status}' (${allowed})`, { task_id: task.id, status: task.status, op, allowed: verbs });
}

/** Apply `op` to `task` at `now`: the new record (version NOT bumped; the store does that), or a thrown TransitionRefused. */
export function transition(task: Task, op: TaskOp, input: TransitionInput, now: string): Task {
  const to = target(task.status, op);
  if (to === undefined) throw invalidTransition(task, op);
  return { ...task, ...sideFields(task, op, input, now), status: to, updated_at: now };
}

const CLEAR_CLAIM = { claimed_by_session: null, assigned_agent: null, node_id: null, claimed_at: null, branch: null } as const;
const reasonOf = (i: TransitionInput): string | null => i.reason ?? i.error ?? null;

// Field changes of each op besides status and updated_at (DECISIONS.md, States and transitions).
function sideFields(task: Task, op: TaskOp, input: TransitionInput, now: string): Partial<Task> {
  switch (op) {
    case 'claim': return claimedBy(task, input, now);
    case 'start': return { status_reason: null };
    case 'release':
      return { ...CLEAR_CLAIM, status_reason: reasonOf(input), retry_count: task.retry_count + (input.count_retry ? 1 : 0) };
    case 'complete': {
      const claim = task.status === 'open' ? claimedBy(task, input, now) : {};
      return { ...claim, result_summary: input.result_summary ?? null, completed_at: now, failure: null, status_reason: null };
    }
    case 'refuse': return { result_summary: input.result_summary ?? null, completed_at: now, failure: null, status_reason: refusalReason(input) };
    case 'fail_summary': return failed(input, now, { type: 'missing_summary', reason: reasonOf(input) ?? 'completion missing summary' });
    case 'fail_contract': return failed(input, now, { type: 'contract_violation', reason: reasonOf(input) ?? 'contract violation', path: input.path ?? '' });
    case 'fail': return failed(input, now, { type: input.failure_type ?? 'failed', reason: reasonOf(input) ?? 'failed' });
    case 'gate_fail': return failed(input, now, { type: 'gate_failed', reason: reasonOf(input) ?? 'required gates failed' });
    case 'close': return { completed_at: task.completed_at ?? now, status_reason: null };
    case 'close_merged': return { completed_at: task.completed_at ?? now, status_reason: reasonOf(input) ?? 'merged by hand' };
    case 'block':
    case 'merge_block': return { status_reason: reasonOf(input) };
    case 'unblock': return { ...CLEAR_CLAIM, status_reason: reasonOf(input) };
    case 'wait':
    case 'split': return { status_reason: input.subtask_count ? `Split into ${input.subtask_count} subtasks` : reasonOf(input) };
    case 'reopen': return reopened(task, input);
    case 'cancel': return { status_reason: reasonOf(input), completed_at: now };
  }
}

function claimedBy(task: Task, input: TransitionInput, now: string): Partial<Task> {
  return {
    claimed_by_session: input.claimed_by_session ?? null, assigned_agent: input.assigned_agent ?? null,
    node_id: input.node_id ?? null, claimed_at: now, claim_count: task.claim_count + 1, status_reason: null, branch: input.branch ?? null,
  };
}

function failed(input: TransitionInput, now: string, failure: Failure): Partial<Task> {
  const summary = input.result_summary === undefined ? {} : { result_summary: input.result_summary };
  return { ...summary, failure, completed_at: now, status_reason: failure.reason };
}

function refusalReason(input: TransitionInput): string | null {
  const refusal = input.payload?.refusal as { reason?: unknown } | undefined;
  return typeof refusal?.reason === 'string' ? refusal.reason : reasonOf(input);
}

// Reopen counts itself and clears everything the finished run left behind, so the task is claimable afresh.
function reopened(task: Task, input: TransitionInput): Partial<Task> {
  const count = Number(task.metadata.janitor_reopen_count ?? 0);
  return {
    ...CLEAR_CLAIM, result_summary: null, completed_at: null, failure: null, status_reason: reasonOf(input),
    metadata: { ...task.metadata, janitor_reopen_count: (Number.isFinite(count) ? count : 0) + 1 },
  };
}

/** The key of an owned file in the owners map: ownership is per tenant, so tenants never block (or see) each other. */
export const ownerKey = (tenant: string, file: string): string => `${tenant}\u0000${file}`;

/** Why `task` cannot be claimed now (unfinished dependencies, owned_files held by a working task of its tenant), or null. */
export function claimBlockers(task: Task, get: (id: string) => Task | undefined, owners: ReadonlyMap<string, Task>): string | null {
  const unresolved = task.depends_on.filter((d) => { const dep = get(d); return !dep || !depSatisfied(dep); });
  if (unresolved.length) return `Task '${task.id}' has unresolved dependencies: ${unresolved.join(', ')}`;
  for (const file of task.owned_files) {
    const owner = owners.get(ownerKey(task.tenant, file));
    if (owner && owner.id !== task.id && WORKING.has(owner.status)) {
      return `File ownership conflict: ${file} already claimed by task '${owner.id}'`;
    }
  }
  return null;
}

/** The 409 detail for a failed compare-and-set on claim, or null when the versions agree. */
export function versionConflict(task: Pick<Task, 'id' | 'version'>, expected: number | undefined): string | null {
  if (expected === undefined || expected === task.version) return null;
  return `Version conflict: task ${task.id} is at version ${task.version}, expected ${expected}`;
}

/** The run id of the task's current claim (claimed_by_session + claim count); null before the first claim. */
export function runId(task: Pick<Task, 'claimed_by_session' | 'claim_count'>): string | null {
  if (task.claim_count === 0) return null;
  return `${task.claimed_by_session ?? 'anonymous'}#${task.claim_count}`;
}
