import { HttpError } from '../lib/http-error.ts';
import { claimOne } from './claims.ts';
import { classifyCompletion } from './contract.ts';
import { isTerminal } from './machine.ts';
import type { Task } from './schema.ts';
import type { Actor, TaskService } from './service.ts';

/**
 * Complete with the completion contract: done, refused, or failed with a 422 carrying the failed task. An open
 * task is first claimed for the caller (DECISIONS.md: claim and complete in one step, each audited).
 */
export async function completeTask(svc: TaskService, id: string, body: { result_summary: string; payload?: Record<string, unknown> }, who: Actor): Promise<Task> {
  if (svc.visible(id, who.tenant).status === 'open') await claimOne(svc, id, { agent_id: who.actor }, who);
  const verdict = classifyCompletion(body);
  if (verdict.kind === 'empty') {
    const task = await finish(svc, id, 'fail_summary', { reason: 'completion missing summary' }, who);
    throw new HttpError(422, 'completion missing summary: result_summary is empty; the task was failed', { task });
  }
  if (verdict.kind === 'violation') {
    const task = await finish(svc, id, 'fail_contract', { reason: verdict.reason, path: verdict.path, result_summary: body.result_summary }, who);
    throw new HttpError(422, `completion contract violation at ${verdict.path}: ${verdict.reason}; the task was failed`, { task });
  }
  if (verdict.kind === 'refused') return finish(svc, id, 'refuse', { result_summary: body.result_summary, payload: verdict.payload }, who);
  return finish(svc, id, 'complete', { result_summary: body.result_summary, payload: verdict.kind === 'completed' ? verdict.payload : undefined }, who);
}

/** Apply an operation that may end a task (the archive record is written by `apply`). */
export function finish(svc: TaskService, id: string, op: Parameters<TaskService['apply']>[1], input: Record<string, unknown>, who: Actor): Promise<Task> {
  return svc.apply(id, op, input, who);
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
      if (!(err instanceof HttpError && err.status === 409)) throw err;
    });
  }
  return svc.apply(id, 'cancel', { reason }, who);
}
