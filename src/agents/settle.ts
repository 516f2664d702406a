import { revokeToken } from '../auth/index.ts';
import { isTerminal, type Task } from '../tasks/index.ts';
import { groupAlive, isAlive, killGroup, retireSession } from '../runner/index.ts';
import { notify } from './observer.ts';
import { appendRun, costFromLog, type RunOutcome, type RunRecord } from './runs.ts';
import { removeSessionFiles, type AgentContext, type Session, type SessionStatus } from './sessions.ts';

/** What a tick does with one session, decided from its task and its process. */
export type SessionAction =
  | { kind: 'wait' }
  | { kind: 'finish' }
  | { kind: 'exit'; op: 'fail' | 'release' | 'block'; reason: string; countRetry: boolean; outcome: RunOutcome }
  | { kind: 'retire'; outcome: RunOutcome };

/** The rules of DECISIONS.md Agents for a session whose task or process changed (pure). */
export function decideSession(input: {
  sid: string;
  status: SessionStatus;
  exitCode: number | null;
  task: Pick<Task, 'status' | 'claimed_by_session' | 'retry_count' | 'max_retries'> | undefined;
  /** Who asked for the kill of a `killed` session. */
  killedBy?: string | null;
}): SessionAction {
  const { task, status, exitCode } = input;
  const killed = status === 'killed';
  if (!task || task.claimed_by_session !== input.sid) return { kind: 'retire', outcome: killed ? 'killed' : 'released' };
  if (task.status === 'done') return { kind: 'finish' };
  if (task.status === 'closed') return { kind: 'retire', outcome: 'succeeded' };
  if (isTerminal(task.status)) return { kind: 'retire', outcome: killed ? 'killed' : 'failed' };
  // Parked tasks keep their worktree: the work is merged once the task reaches done.
  if (task.status === 'waiting_for_subtasks' || task.status === 'blocked') return { kind: 'wait' };
  if (status === 'running') return { kind: 'wait' };
  if (status === 'starting') return { kind: 'exit', op: 'release', reason: 'agent did not start', countRetry: false, outcome: 'released' };
  // A person's kill stops the work until someone unblocks the task; only an agent dying on its own is retried.
  if (killed) return { kind: 'exit', op: 'block', reason: `killed by ${input.killedBy || 'request'}`, countRetry: false, outcome: 'killed' };
  if (!killed && exitCode === 0) return { kind: 'exit', op: 'fail', reason: 'exited without reporting completion', countRetry: false, outcome: 'failed' };
  const why = exitCode === null ? 'agent ended without an exit code' : `agent exited with code ${exitCode}`;
  if (task.retry_count < task.max_retries) return { kind: 'exit', op: 'release', reason: why, countRetry: true, outcome: 'released' };
  return { kind: 'exit', op: 'fail', reason: `${why}; retries exhausted (${task.retry_count} of ${task.max_retries})`, countRetry: false, outcome: 'failed' };
}

/** Apply the decision to every session not busy finishing; `startFinish` runs gates and merge in the background. */
export async function settleSessions(ctx: AgentContext, startFinish: (s: Session) => void): Promise<void> {
  for (const s of [...ctx.sessions.values()]) {
    if (s.busy) continue;
    const action = decideSession({ sid: s.rec.session_id, status: s.rec.status, exitCode: s.rec.exit_code, task: ctx.svc.get(s.rec.task_id), killedBy: s.rec.killed_by ?? null });
    try {
      if (action.kind === 'finish') startFinish(s);
      else if (action.kind === 'exit') await agentExit(ctx, s, action);
      else if (action.kind === 'retire') await retire(ctx, s, action.outcome);
    } catch (err) {
      ctx.log.error(`session ${s.rec.session_id}: ${action.kind} failed`, err);
    }
  }
}

async function agentExit(ctx: AgentContext, s: Session, a: Extract<SessionAction, { kind: 'exit' }>): Promise<void> {
  const who = { actor: 'orchestrator', tenant: s.rec.tenant };
  ctx.log.info(`session ${s.rec.session_id}: ${a.reason}; ${{ fail: 'failing', release: 'releasing', block: 'blocking' }[a.op]} task ${s.rec.task_id}`);
  if (a.op === 'fail') await ctx.svc.apply(s.rec.task_id, 'fail', { reason: a.reason, failure_type: 'agent_exit' }, who);
  else if (a.op === 'block') await ctx.svc.apply(s.rec.task_id, 'block', { reason: a.reason }, who);
  else await ctx.svc.apply(s.rec.task_id, 'release', { reason: a.reason, count_retry: a.countRetry }, who);
  await retire(ctx, s, a.outcome);
}

/** End a session: stop what is left of its processes, revoke its token, remove its worktree (work kept in the graveyard), record the run; returns the graveyard refs. */
export async function retire(ctx: AgentContext, s: Session, outcome: RunOutcome): Promise<string[]> {
  const { rec } = s;
  const pid = rec.pid;
  // Only a group we started in this process, or a leader still alive, is ours to signal (pids get reused).
  if (pid !== null && (s.child !== null || isAlive(pid, Date.parse(rec.started_at))) && groupAlive(pid)) await killGroup(pid, { graceMs: 2_000 });
  if (rec.token_id) await revokeToken(ctx.layout, rec.token_id, ctx.clock).catch((err) => ctx.log.warn(`token ${rec.token_id}: ${(err as Error).message}`));
  const r = await retireSession(ctx, rec.session_id, ctx.base);
  let run: RunRecord | null = null;
  if (pid !== null) {
    run = {
      session_id: rec.session_id, task_id: rec.task_id, tenant: rec.tenant, adapter: rec.adapter, model: rec.model, outcome,
      seconds: Math.max(0, Math.round((ctx.clock.now() - Date.parse(rec.started_at)) / 10) / 100),
      gates_passed: rec.gates_passed, cost_usd: await costFromLog(ctx.layout.log(rec.session_id)), finished_at: ctx.clock.iso(),
    };
    await appendRun(ctx, run);
  }
  await removeSessionFiles(ctx.layout, rec.session_id);
  ctx.sessions.delete(rec.session_id);
  notify(ctx.observer, ctx.log, 'ended', { ...rec }, run);
  const kept = r.graveyard.length ? `; unmerged work kept in ${r.graveyard.join(', ')}` : '';
  ctx.log.info(`session ${rec.session_id} retired (${outcome})${kept}`);
  return r.graveyard;
}
