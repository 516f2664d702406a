import { saveSession, type AgentContext, type Session } from './sessions.ts';

/** What to do with a session's stall flag: log when it starts, clear it when the agent moves again (pure). */
export function stallChange(was: boolean, now: boolean): 'stalled' | 'recovered' | null {
  if (now === was) return null;
  return now ? 'stalled' : 'recovered';
}

/** Mark running sessions whose task's last `stall_snapshots` snapshots show no change; never kills. */
export async function detectStalls(ctx: AgentContext): Promise<string[]> {
  const stalled: string[] = [];
  for (const s of ctx.sessions.values()) {
    if (s.rec.status !== 'running' || s.busy) continue;
    const now = await isTaskStalled(ctx, s);
    if (now) stalled.push(s.rec.session_id);
    const change = stallChange(s.rec.stalled, now);
    if (!change) continue;
    s.rec.stalled = now;
    if (change === 'stalled') {
      ctx.log.warn(`session ${s.rec.session_id} (task ${s.rec.task_id}) looks stalled: its last ${ctx.config.orchestrator.stall_snapshots} progress snapshots show no change`);
    } else {
      ctx.log.info(`session ${s.rec.session_id} (task ${s.rec.task_id}) is moving again`);
    }
    await saveSession(ctx, s.rec);
  }
  return stalled;
}

async function isTaskStalled(ctx: AgentContext, s: Session): Promise<boolean> {
  const task = ctx.svc.get(s.rec.task_id);
  if (!task || task.claimed_by_session !== s.rec.session_id) return false;
  try {
    return (await ctx.svc.progress(task.id, { actor: 'orchestrator', tenant: task.tenant })).stalled;
  } catch {
    return false;
  }
}
