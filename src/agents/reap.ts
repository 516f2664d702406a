import { readdir, readFile, rm } from 'node:fs/promises';
import { isValidId } from '../store/ids.ts';
import { exitFilePath, isAlive, killGroup, readExitCode, reconcileWorktrees } from '../runner/index.ts';
import type { SddLayout } from '../store/layout.ts';
import { nodeHeldTask } from './remote.ts';
import { loadSessionRecords, saveSession, type AgentContext, type Session } from './sessions.ts';

// The agent's own exit code: our child's wrapper reports it; an adopted one left it in its exit file.
async function exitCodeOf(ctx: AgentContext, s: Session): Promise<number | null> {
  if (s.exit) return s.exit.code;
  return readExitCode(exitFilePath(ctx.layout, s.rec.session_id));
}

function gone(s: Session): boolean {
  if (s.child) return s.exit !== null;
  return s.rec.pid === null || !isAlive(s.rec.pid, Date.parse(s.rec.started_at));
}

/** Mark sessions whose agent process ended as exited, with its exit code. */
export async function reapExited(ctx: AgentContext): Promise<string[]> {
  const reaped: string[] = [];
  for (const s of ctx.sessions.values()) {
    // A finishing job owns its session until it ends (it may retire it); reap afterwards.
    if (s.busy || s.rec.status !== 'running' || !gone(s)) continue;
    Object.assign(s.rec, { status: 'exited', exit_code: await exitCodeOf(ctx, s), ended_at: ctx.clock.iso() });
    await saveSession(ctx, s.rec);
    ctx.log.info(`session ${s.rec.session_id} (task ${s.rec.task_id}): agent exited with code ${s.rec.exit_code ?? 'none'}`);
    reaped.push(s.rec.session_id);
  }
  return reaped;
}

/** Act on `.sdd/runtime/signals/<sid>.kill`: kill the agent's process group; each file is consumed once. */
export async function actOnKills(ctx: AgentContext): Promise<string[]> {
  const names = await readdir(ctx.layout.signalsDir).catch(() => [] as string[]);
  const killed: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.kill')) continue;
    const sid = name.slice(0, -5);
    const s = isValidId(sid) ? ctx.sessions.get(sid) : undefined;
    // Left for a later tick while gates or a merge run for the session; a node's agent: for that node (its heartbeat answer).
    if (s?.busy || (!s && isValidId(sid) && nodeHeldTask(ctx.svc, sid))) continue;
    const killedBy = requester(await readFile(`${ctx.layout.signalsDir}/${name}`, 'utf8').catch(() => ''));
    await rm(`${ctx.layout.signalsDir}/${name}`, { force: true });
    if (!s || s.rec.status !== 'running' || s.rec.pid === null) {
      ctx.log.info(`kill request for ${sid.slice(0, 64)}: no running agent`);
      continue;
    }
    const how = await killGroup(s.rec.pid, { graceMs: 3_000 });
    Object.assign(s.rec, { status: 'killed', exit_code: await exitCodeOf(ctx, s), ended_at: ctx.clock.iso(), killed_by: killedBy });
    await saveSession(ctx, s.rec);
    ctx.log.warn(`session ${sid} (task ${s.rec.task_id}): agent killed on request of ${killedBy} (${how})`);
    killed.push(sid);
  }
  return killed;
}

/** Who asked to kill session `sid` (its kill file), or null when nobody did; cluster nodes learn it from their heartbeat. */
export async function killRequester(layout: Pick<SddLayout, 'kill'>, sid: string): Promise<string | null> {
  if (!isValidId(sid)) return null;
  const text = await readFile(layout.kill(sid), 'utf8').catch(() => null);
  return text === null ? null : requester(text);
}

// Who wrote the kill file: `{"requested_by": …}` from POST /agents/{sid}/kill; a file made by hand names nobody.
function requester(text: string): string {
  try {
    const by = (JSON.parse(text) as { requested_by?: unknown }).requested_by;
    if (typeof by === 'string' && by.trim()) return by.trim().slice(0, 200);
  } catch {
    // not JSON: a file created by hand
  }
  return 'a kill signal file';
}

/** At start: load the sessions a previous run left, keep watching the live ones, and retire stray worktrees and branches. */
export async function adoptSessions(ctx: AgentContext): Promise<void> {
  for (const rec of await loadSessionRecords(ctx)) {
    const s: Session = { rec, child: null, exit: null, busy: false };
    if (rec.status === 'running' && gone(s)) {
      Object.assign(rec, { status: 'exited', exit_code: await exitCodeOf(ctx, s), ended_at: ctx.clock.iso() });
      await saveSession(ctx, rec);
    }
    ctx.sessions.set(rec.session_id, s);
    if (rec.status === 'running') ctx.log.info(`adopted session ${rec.session_id} (pid ${rec.pid}, task ${rec.task_id})`);
  }
  if (!ctx.base) return;
  // Every session with a record keeps its worktree; the tick decides what happens to it. Others are retired (graveyard first).
  // Sessions of cluster nodes push agent/<sid> to /repo.git, also while we start: never strays.
  const remote = new Set(ctx.svc.list({ status: ['claimed', 'in_progress', 'done'] }).filter((t) => t.node_id && t.claimed_by_session).map((t) => t.claimed_by_session!));
  const report = await reconcileWorktrees(ctx, { live: new Set(ctx.sessions.keys()), base: ctx.base, remote });
  for (const r of report.retired) {
    ctx.log.info(`retired stray session ${r.sessionId}${r.graveyard.length ? `; unmerged work kept in ${r.graveyard.join(', ')}` : ''}`);
  }
  if (report.recreated.length) ctx.log.info(`re-created worktrees of ${report.recreated.join(', ')}`);
  if (report.unknown.length) ctx.log.warn(`unknown folders under .sdd/worktrees left alone: ${report.unknown.join(', ')}`);
}
