import { HttpError } from '../lib/http-error.ts';
import { oneLine } from '../lib/one-line.ts';
import type { Actor, Task, TaskOp } from '../tasks/index.ts';
import { envPolicy, gateEnv, sandboxWrapper } from '../runner/index.ts';
import { runGates } from './gates.ts';
import { mergeSession, type MergeResult } from './merge.ts';
import { notify } from './observer.ts';
import { saveSession, type AgentContext, type Session } from './sessions.ts';
import { retire } from './settle.ts';

/** What to do after the gates ran on a done task (pure). */
export function gateVerdict(input: { pass: boolean; failedRequired: string[]; reopens: number; maxReopens: number }):
  { kind: 'merge' } | { kind: 'reopen'; reason: string } | { kind: 'fail'; reason: string } {
  if (input.pass) return { kind: 'merge' };
  const why = `required gate(s) failed: ${input.failedRequired.join(', ')}`;
  if (input.reopens < input.maxReopens) return { kind: 'reopen', reason: `${why} (janitor reopen ${input.reopens + 1} of ${input.maxReopens})` };
  return { kind: 'fail', reason: `${why}; reopened ${input.reopens} time(s) already` };
}

/** A done task: run the gates in its worktree, then merge its branch into the base and close it (or reopen, fail, block, defer). */
export async function finishSession(ctx: AgentContext, s: Session): Promise<void> {
  const { rec } = s;
  const task = ctx.svc.get(rec.task_id);
  if (!task || task.status !== 'done') return;
  const who = { actor: 'orchestrator', tenant: task.tenant };
  if (rec.gates_passed === null) {
    const passed = await gateTask(ctx, s, task, who);
    if (!passed) return;
  }
  const merge = await mergeSession(ctx, { sessionId: rec.session_id, base: ctx.base, message: `Merge ${rec.branch}: ${oneLine(task.title)} (task ${task.id})` });
  // A deferred merge is retried every tick: told once per reason.
  if (merge.status !== 'deferred' || rec.merge_deferred !== merge.reason) notify(ctx.observer, ctx.log, 'merged', task.id, merge.status);
  await afterMerge(ctx, s, task, who, merge);
}

// Run and store the gate report; a failure reopens (janitor) or fails the task and retires the session.
async function gateTask(ctx: AgentContext, s: Session, task: Task, who: Actor): Promise<boolean> {
  const { rec } = s;
  // Gates run the agent's code (tests, builds): in the same sandbox as the agent.
  const env = gateEnv(ctx.env, envPolicy(ctx.config), { taskId: task.id, sessionId: rec.session_id });
  const wrap = await sandboxWrapper(ctx, rec.worktree);
  const report = await runGates(ctx, { gates: ctx.config.gates, taskId: task.id, sessionId: rec.session_id, cwd: rec.worktree, env, wrap });
  await ctx.store.writeJson(ctx.layout.gates(task.id), report, { action: report.overall_pass ? 'gates passed' : 'gates failed', id: task.id, title: task.title, actor: who.actor });
  notify(ctx.observer, ctx.log, 'gates', report);
  rec.gates_passed = report.overall_pass;
  await saveSession(ctx, rec);
  const reopens = Number(task.metadata.janitor_reopen_count ?? 0) || 0;
  const v = gateVerdict({ pass: report.overall_pass, failedRequired: report.failed_required, reopens, maxReopens: ctx.config.janitor.max_reopens });
  if (v.kind === 'merge') return true;
  ctx.log.warn(`task ${task.id}: ${v.reason}; ${v.kind === 'reopen' ? 'reopening' : 'failing'} it`);
  if (v.kind === 'reopen') await ctx.svc.apply(task.id, 'reopen', { reason: v.reason }, who);
  else await fromDone(ctx, task, 'fail', { reason: v.reason, failure_type: 'gate_failed' }, who);
  await retire(ctx, s, 'failed');
  return false;
}

async function afterMerge(ctx: AgentContext, s: Session, task: Task, who: Actor, merge: MergeResult): Promise<void> {
  const { rec } = s;
  if (merge.status === 'merged' || merge.status === 'already') {
    if ('merge_deferred' in task.metadata) await setMetadata(ctx, task, who, null);
    await ctx.svc.apply(task.id, 'close', {}, who);
    ctx.log.success(`task ${task.id}: ${rec.branch} merged into ${ctx.base} (${merge.commit.slice(0, 12)}); closed`);
    await retire(ctx, s, 'succeeded');
  } else if (merge.status === 'deferred') {
    // Never touch the user's files: say why and try again on a later tick.
    if (rec.merge_deferred === merge.reason) return;
    ctx.log.warn(`task ${task.id}: merge of ${rec.branch} into ${ctx.base} deferred: ${merge.reason}`);
    rec.merge_deferred = merge.reason;
    await saveSession(ctx, rec);
    await setMetadata(ctx, task, who, merge.reason);
  } else {
    // Retire first: it moves the work to the graveyard, and the reason says where a person finds it.
    const kept = await retire(ctx, s, 'failed');
    const reason = conflictReason({ taskId: task.id, paths: merge.paths, base: ctx.base, refs: kept.length ? kept : [rec.branch] });
    ctx.log.warn(`task ${task.id}: ${reason}`);
    await fromDone(ctx, task, 'block', { reason }, who);
  }
}

/** The blocked reason of a merge conflict: the paths, where the work is, and how to finish by hand (pure). */
export function conflictReason(input: { taskId: string; paths: readonly string[]; base: string; refs: readonly string[] }): string {
  const more = input.paths.length > 50 ? ` and ${input.paths.length - 50} more` : '';
  return `merge conflict: ${input.paths.slice(0, 50).join(', ')}${more}; the work is kept in ${input.refs.join(', ')}: ` +
    `merge it into ${input.base} yourself, then run 'svc task close ${input.taskId} --merged'`;
}

// `metadata.merge_deferred` tells users of the board why a done task is not closed yet.
async function setMetadata(ctx: AgentContext, task: Task, who: Actor, reason: string | null): Promise<void> {
  const cur = ctx.svc.get(task.id) ?? task;
  const { merge_deferred: _old, ...rest } = cur.metadata;
  const metadata = reason === null ? rest : { ...rest, merge_deferred: reason };
  await ctx.svc.patch(task.id, { metadata }, who).catch((err) => ctx.log.warn(`task ${task.id}: cannot note the deferred merge: ${(err as Error).message}`));
}

/** Fail (gates) or block (merge conflict) a done task: the machine's orchestrator-only edges out of done. */
export function fromDone(ctx: AgentContext, task: Task, op: 'fail' | 'block', input: Record<string, unknown>, who: Actor): Promise<Task> {
  return ctx.svc.apply(task.id, op === 'fail' ? 'gate_fail' : 'merge_block', input, who);
}

