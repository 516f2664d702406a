import { hasCode } from '../lib/domain-error.ts';
import { HttpError, unprocessable } from '../lib/http-error.ts';
import { ClaimBlocked } from './errors.ts';
import { claimNext } from './claims.ts';
import { classifyCompletion } from './contract.ts';
import { claimBlockers, isTerminal } from './machine.ts';
import type { Task } from './schema.ts';
import type { Actor, TaskService } from './service.ts';

/**
 * Complete with the completion contract: done, refused, or failed with a 422 carrying the failed task. An open
 * task is claimed for the caller and completed in the same write, with an audit entry for each (DECISIONS.md);
 * a bad report on an open task answers 422 and leaves it open, as nobody held it. `queued` is told when a
 * completion or refusal is on its way to disk (never for the failing 422s: no next task follows those).
 */
export async function completeTask(svc: TaskService, id: string, body: { result_summary: string; payload?: Record<string, unknown> }, who: Actor, queued?: () => void): Promise<Task> {
  const verdict = classifyCompletion(body);
  const current = svc.visible(id, who.tenant);
  // A node's late report on a task stolen from it is refused before its content is judged.
  svc.fence(current, who);
  const open = current.status === 'open';
  if (verdict.kind === 'empty') {
    if (open) throw unprocessable('completion missing summary: result_summary is empty');
    const task = await finish(svc, id, 'fail_summary', { reason: 'completion missing summary' }, who);
    throw new HttpError(422, 'completion missing summary: result_summary is empty; the task was failed', { task });
  }
  if (verdict.kind === 'violation') {
    if (open) throw unprocessable(`completion contract violation at ${verdict.path}: ${verdict.reason}`);
    const task = await finish(svc, id, 'fail_contract', { reason: verdict.reason, path: verdict.path, result_summary: body.result_summary }, who);
    throw new HttpError(422, `completion contract violation at ${verdict.path}: ${verdict.reason}; the task was failed`, { task });
  }
  if (verdict.kind === 'refused') return finish(svc, id, 'refuse', { result_summary: body.result_summary, payload: verdict.payload }, who, queued);
  // From open it is a claim too: refused while draining, and the claim rules hold (dependencies, owned files).
  if (open) svc.assertAccepting();
  const input = { result_summary: body.result_summary, payload: verdict.kind === 'completed' ? verdict.payload : undefined, assigned_agent: who.actor };
  return svc.apply(id, 'complete', input, who, {
    check: (cur) => claimableIfOpen(svc, cur),
    auditFirst: (_next, from) => (from === 'open' ? { action: 'task.claim', details: { from: 'open', to: 'claimed', with: 'complete' } } : null),
    queued,
  });
}

function claimableIfOpen(svc: TaskService, cur: Task): void {
  if (cur.status !== 'open') return;
  const why = claimBlockers(cur, (x) => svc.board.get(x), svc.board.activeOwners());
  if (why) throw new ClaimBlocked(cur.id, why);
}

/**
 * The fused cycle of a worker: finish a task (`end`: complete or fail) and, in the same call, claim the
 * next open task of `role` for the session that held it (or `nextSession`: a worker's agent session is
 * one task's, so it names a new one). `next` is null when there is none, the server
 * is draining, or the claim failed: the finish is acknowledged either way, and the worker asks again.
 *
 * The claim starts as soon as the finish is queued for the journal (`end` calls `queued`), so both
 * usually share one group commit: one datasync per cycle, as BullMQ's moveToCompleted with its next job.
 * The claim's line comes after the finish's; in the rare case it is durable and the finish is not (the
 * disk refused the finish's batch only), the claim is released again and the finish's error answers.
 * A task the finishing one blocks (its owned files, a dependency) is not yet free to this claim.
 */
export async function finishThenNext(svc: TaskService, id: string, role: string, who: Actor, end: (queued: () => void) => Promise<Task>, nextSession?: string): Promise<{ completed: Task; next: Task | null }> {
  const session = nextSession ?? svc.visible(id, who.tenant).claimed_by_session;
  // Started by the finish once it is queued (claimNext is async: nothing of it throws into the finish's write).
  // A finish refused before it was queued (409, 422, 404) never starts it: its error answers.
  let claiming: Promise<Task | null> | undefined;
  const claim = () => {
    claiming ??= claimNext(svc, role, session ? { claimed_by_session: session } : {}, who).catch((err: unknown) => {
      if (!hasCode(err, 'no_open_task', 'draining')) svc.deps.log.warn(`next ${role} task after ${id} not claimed: ${(err as Error).message}`);
      return null;
    });
  };
  try {
    const completed = await end(claim);
    claim(); // a finish that never told (a store without the hook) still gets its next task
    return { completed, next: await claiming! };
  } catch (err) {
    const next = claiming ? await claiming : null;
    if (next) await svc.apply(next.id, 'release', { reason: `the finish of ${id} failed` }, who).catch((e: unknown) => svc.deps.log.error(`task ${next.id}: claimed after a failed finish of ${id} and not released: ${(e as Error).message}`));
    throw err;
  }
}

/** Apply an operation that may end a task (the archive record is written by `apply`); `queued` as ApplyOptions.queued. */
export function finish(svc: TaskService, id: string, op: Parameters<TaskService['apply']>[1], input: Record<string, unknown>, who: Actor, queued?: () => void): Promise<Task> {
  return svc.apply(id, op, input, who, queued ? { queued } : {});
}

/** Cancel a task and every non-terminal descendant (children first); returns the root. */
export async function cancelTask(svc: TaskService, id: string, reason: string | undefined, who: Actor): Promise<Task> {
  const root = svc.visible(id, who.tenant);
  if (isTerminal(root.status)) await svc.apply(id, 'cancel', { reason }, who); // answers the contract's 409
  const order: string[] = [];
  const walk = (pid: string) => { for (const c of svc.board.children(pid)) { walk(c.id); order.push(c.id); } };
  walk(id);
  for (const cid of order) {
    const c = svc.board.get(cid);
    if (!c || isTerminal(c.status)) continue;
    // No roll-up inside the cascade: the waiting ancestors are cancelled next, not blocked by their cancelled children.
    await svc.apply(cid, 'cancel', { reason: `Cascade: parent ${id} cancelled` }, who, { rollUp: false }).catch((err) => {
      if (!hasCode(err, 'transition_refused')) throw err;
    });
  }
  return svc.apply(id, 'cancel', { reason }, who);
}
