// The refusals of the tasks domain, as data (lib/domain-error.ts); server/errors.ts maps their codes to HTTP.
import { DomainError } from '../lib/domain-error.ts';

/** The state machine has no such (state, op) pair; `allowed` names what the state allows. */
export class TransitionRefused extends DomainError<'transition_refused', { task_id: string; status: string; op: string; allowed: string[] }> {}

/** No such task in the caller's tenant (another tenant's task is not found either). */
export class TaskNotFound extends DomainError<'task_not_found', { task_id: string }> {
  constructor(id: string) {
    super('task_not_found', `Task '${String(id).slice(0, 200)}' not found`, { task_id: String(id).slice(0, 200) });
  }
}

/** A compare-and-set lost: the task is at `current_version`, not the one expected. */
export class VersionConflict extends DomainError<'version_conflict', { task_id: string; current_version: number; expected_version: number }> {
  constructor(id: string, current: number, expected: number) {
    super('version_conflict', `Version conflict: task ${id} is at version ${current}, expected ${expected}`, { task_id: id, current_version: current, expected_version: expected });
  }
}

/** An open task that cannot be claimed now: unfinished dependencies, or a file another working task owns. */
export class ClaimBlocked extends DomainError<'claim_blocked', { task_id: string }> {
  constructor(id: string, reason: string) {
    super('claim_blocked', reason, { task_id: id });
  }
}

/** The task is no longer held by the session that acts on it (released, claimed again by another). */
export class TaskReassigned extends DomainError<'task_reassigned', { task_id: string; session: string; claimed_by_session: string | null }> {
  constructor(id: string, session: string, holder: string | null) {
    super('task_reassigned', `Task '${id}' is no longer held by session '${session}'`, { task_id: id, session, claimed_by_session: holder });
  }
}

/** No open task of the role (after the wait, when one was asked for). */
export class NoOpenTask extends DomainError<'no_open_task', { role: string }> {
  constructor(role: string) {
    super('no_open_task', `No open tasks for role '${role}'`, { role });
  }
}

/** The server is draining: no creations or claims. */
export class Draining extends DomainError<'draining', Record<string, never>> {
  constructor() {
    super('draining', 'Server is draining -- no new claims or creations accepted', {});
  }
}

/** Codes of the refusals that concern one task (its state, version, claim), not the server. */
export const TASK_REFUSALS = ['transition_refused', 'task_not_found', 'version_conflict', 'claim_blocked', 'task_reassigned'] as const;
