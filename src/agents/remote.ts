import { agentBranch, addWorktree, revParse } from '../runner/index.ts';
import { isValidId } from '../store/ids.ts';
import type { Task } from '../tasks/index.ts';
import { fromDone } from './finish.ts';
import { saveSession, type AgentContext, type Session, type SessionRecord } from './sessions.ts';

/** What to do with a done task a cluster node finished (pure): adopt its pushed branch, block it, or leave it. */
export function remoteAction(task: Pick<Task, 'status' | 'node_id' | 'claimed_by_session'>, known: (sid: string) => boolean, branchPushed: boolean | null):
  'adopt' | 'block' | 'skip' | 'look' {
  const sid = task.claimed_by_session;
  if (task.status !== 'done' || !task.node_id || !sid || !isValidId(sid) || known(sid)) return 'skip';
  if (branchPushed === null) return 'look';
  return branchPushed ? 'adopt' : 'block';
}

/** The claimed or in-progress task a cluster node holds for session `sid`, or undefined (its agent runs on that node). */
export function nodeHeldTask(svc: Pick<AgentContext['svc'], 'list'>, sid: string): Task | undefined {
  return svc.list({ status: ['claimed', 'in_progress'] }).find((t) => t.claimed_by_session === sid && !!t.node_id);
}

/**
 * Done tasks that workers finished: the branch they pushed to /repo.git gets a worktree and a session
 * record here, and the tick then runs gates and the merge exactly as for a local agent's session.
 */
export async function adoptRemoteDone(ctx: AgentContext): Promise<Session[]> {
  if (!ctx.base) return [];
  const adopted: Session[] = [];
  for (const task of ctx.svc.list({ status: 'done' })) {
    const known = (sid: string) => ctx.sessions.has(sid);
    if (remoteAction(task, known, null) === 'skip') continue;
    const sid = task.claimed_by_session!;
    const pushed = (await revParse(ctx.git, `refs/heads/${agentBranch(sid)}`)) !== null;
    if (remoteAction(task, known, pushed) === 'block') {
      const reason = `node ${task.node_id} reported completion, but its branch ${agentBranch(sid)} never reached the server (git push to /repo.git)`;
      ctx.log.warn(`task ${task.id}: ${reason}`);
      await fromDone(ctx, task, 'block', { reason }, { actor: 'orchestrator', tenant: task.tenant }).catch((err) => ctx.log.warn(`task ${task.id}: ${(err as Error).message}`));
      continue;
    }
    const wt = await addWorktree(ctx, sid, ctx.base);
    const now = ctx.clock.iso();
    const rec: SessionRecord = {
      session_id: sid, role: task.role, adapter: null, model: task.model, status: 'exited', pid: null, task_id: task.id, task_title: task.title,
      tenant: task.tenant, worktree: wt.path, branch: wt.branch, started_at: task.claimed_at ?? now, ended_at: now, exit_code: 0,
      node_id: task.node_id, stalled: false, sandbox: ctx.sandbox.mode === 'bwrap' ? 'bwrap' : 'none', token_id: null, gates_passed: null, merge_deferred: null, trace_id: null,
    };
    await saveSession(ctx, rec);
    const s: Session = { rec, child: null, exit: null, busy: false };
    ctx.sessions.set(sid, s);
    ctx.log.info(`task ${task.id}: work of node ${task.node_id} (${wt.branch}) adopted for gates and merge`);
    adopted.push(s);
  }
  return adopted;
}
