import { conflict, notFound } from '../lib/http-error.ts';
import { isValidId } from '../store/ids.ts';
import { hasCode } from '../lib/domain-error.ts';
import { retry } from '../lib/retry.ts';
import { ClaimBlocked, NoOpenTask, TASK_REFUSALS } from './errors.ts';
import { claimBlockers } from './machine.ts';
import type { Task } from './schema.ts';
import type { Actor, TaskService } from './service.ts';

export interface NextOptions {
  claimed_by_session?: string;
  parent_session_id?: string;
  wait_s?: number;
}

/** Claim the best open task of a role (priority, then age); waits up to `wait_s` for one to appear. */
export async function claimNext(svc: TaskService, role: string, opts: NextOptions, who: Actor, signal?: AbortSignal): Promise<Task> {
  svc.assertAccepting();
  // A cordoned or draining node gets no new work: the same 404 as an empty queue, with the reason.
  const refusal = who.node === undefined ? null : svc.nodes?.claimRefusal(who.node);
  if (refusal) throw notFound(refusal);
  // The deadline on the clock the wait runs on, so manual timers move both.
  const deadline = svc.timers.now() + (opts.wait_s ?? 0) * 1000;
  for (;;) {
    // A long-poll client that hung up must not be handed (and silently hold) a task.
    if (signal?.aborted) throw new NoOpenTask(role);
    const task = await tryClaimNext(svc, role, opts, who);
    if (task) return task;
    const left = deadline - svc.timers.now();
    if (left <= 0 || signal?.aborted) throw new NoOpenTask(role);
    await readyOrTimeout(svc, role, who.tenant, left, signal);
    svc.assertAccepting();
  }
}

// Candidates are popped synchronously, so concurrent callers never race for the same task.
async function tryClaimNext(svc: TaskService, role: string, opts: NextOptions, who: Actor): Promise<Task | undefined> {
  const skipped: Task[] = [];
  try {
    for (;;) {
      const filter = opts.parent_session_id ? (t: Task) => t.parent_session_id === opts.parent_session_id : undefined;
      const cand = svc.board.takeNext(role, who.tenant, filter);
      if (!cand) return undefined;
      try {
        return await claimOne(svc, cand.id, { claimed_by_session: opts.claimed_by_session, expectedVersion: cand.version }, who);
      } catch (err) {
        // Lost a race or blocked by owned files: keep it for later callers if it is still open.
        const cur = svc.board.get(cand.id);
        if (cur?.status === 'open' && !hasCode(err, 'version_conflict')) skipped.push(cur);
        // Anything but this task's refusal (disk trouble, draining) is the server's: never "no open tasks".
        if (!hasCode(err, 'transition_refused', 'version_conflict', 'claim_blocked')) throw err;
      }
    }
  } finally {
    for (const t of skipped) svc.board.putBack(t);
  }
}

/** Claim one task by id with compare-and-set: VersionConflict, TransitionRefused or ClaimBlocked when it cannot be. */
export async function claimOne(svc: TaskService, id: string, opts: { claimed_by_session?: string; expectedVersion?: number; agent_id?: string; node_id?: string; branch?: string }, who: Actor): Promise<Task> {
  svc.assertAccepting();
  const refusal = who.node === undefined ? null : svc.nodes?.claimRefusal(who.node);
  if (refusal) throw conflict(refusal);
  const input = { claimed_by_session: opts.claimed_by_session ?? null, assigned_agent: opts.agent_id ?? opts.claimed_by_session ?? null, node_id: opts.node_id ?? who.node ?? null, branch: opts.branch ?? nodeBranch(who, opts.claimed_by_session) };
  return svc.apply(id, 'claim', input, who, {
    expectedVersion: opts.expectedVersion,
    check: (cur) => {
      if (cur.status !== 'open') return; // the machine refuses the state
      const reason = claimBlockers(cur, (x) => svc.board.get(x), svc.board.activeOwners());
      if (reason) throw new ClaimBlocked(id, reason);
    },
  });
}

/**
 * Claim every listed task or none: `failed` names each refusal of a task (TASK_REFUSALS), and claims already
 * made are released again. Trouble that is the server's (a failing disk) is not a refusal: the claims
 * made are released (retried, the same disk may refuse the release too) and the error answers (503).
 */
export async function claimBatch(svc: TaskService, ids: string[], opts: { agent_id?: string; claimed_by_session?: string }, who: Actor): Promise<{ claimed: Task[]; failed: { task_id: string; reason: string }[] }> {
  svc.assertAccepting();
  const unique = [...new Set(ids)];
  const failed: { task_id: string; reason: string }[] = [];
  for (const id of unique) {
    const t = svc.board.get(id);
    if (!t || t.tenant !== who.tenant) failed.push({ task_id: id, reason: `Task '${id}' not found` });
    else if (t.status !== 'open') failed.push({ task_id: id, reason: `Cannot claim task '${id}' in state '${t.status}'` });
  }
  if (failed.length) return { claimed: [], failed };
  const claimed: Task[] = [];
  let trouble: unknown;
  for (const id of unique) {
    try {
      claimed.push(await claimOne(svc, id, opts, who));
    } catch (err) {
      if (hasCode(err, ...TASK_REFUSALS)) failed.push({ task_id: id, reason: err.message });
      else trouble = err;
      break;
    }
  }
  if (!failed.length && trouble === undefined) return { claimed, failed };
  for (const t of claimed.reverse()) await rollBack(svc, t.id, who);
  if (trouble !== undefined) throw trouble;
  return { claimed: [], failed };
}

// Release a claim of a batch that did not go through; a few tries, as the disk that failed the batch
// may refuse the first release too. A claim left (the disk stays full) is logged, and stale-claim rules apply.
async function rollBack(svc: TaskService, id: string, who: Actor, tries = 10): Promise<void> {
  const release = (attempt: number) => svc.apply(id, 'release', { reason: 'claim-batch rolled back' }, who).catch((err: unknown) => {
    throw attempt >= tries || hasCode(err, ...TASK_REFUSALS) ? new GiveUp(err) : err;
  });
  await retry(release, { timers: svc.timers, minMs: 10, maxMs: 160, retryable: (err) => !(err instanceof GiveUp) })
    .catch((err: unknown) => svc.deps.log.error(`claim-batch rollback of ${id} failed`, err instanceof GiveUp ? err.cause : err));
}

// The last try of a rollback failed, or the task refused: stop retrying.
class GiveUp extends Error {
  constructor(readonly cause: unknown) { super('gave up'); }
}

// Resolve when a task of this role becomes claimable in the tenant, or after `ms`.
function readyOrTimeout(svc: TaskService, role: string, tenant: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { svc.timers.clearTimeout(timer); off(); signal?.removeEventListener('abort', done); resolve(); };
    const timer = svc.timers.setTimeout(done, ms);
    const off = svc.onChange((t) => { if (t.status === 'open' && t.role === role && t.tenant === tenant) done(); else if (t.status === 'done' || t.status === 'closed') done(); });
    signal?.addEventListener('abort', done, { once: true });
  });
}

// A node's session works on agent/<sid> and the server merges it: its dependents wait for the merge (closed), not for done.
function nodeBranch(who: Actor, sid: string | undefined): string | null {
  return who.node !== undefined && isValidId(sid) ? `agent/${sid}` : null;
}
