// The worker's agent sessions: one record per claimed task under `.sdd/runtime/worker/sessions/`, kept
// until its report is in the outbox, so a worker killed at any point finds every session at restart.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { writeFileAtomic } from '../store/atomic.ts';
import { join } from 'node:path';
import { decideSession } from '../agents/index.ts';
import { isValidId } from '../store/ids.ts';
import type { Report } from './outbox.ts';

/** One session on this worker. */
export interface WorkerSession {
  session_id: string;
  task_id: string;
  task_title: string;
  tenant: string;
  role: string;
  /** Claims of the task so far, this one included (a crash is retried while claims ≤ max_retries). */
  claim_count: number;
  max_retries: number;
  /** claiming: saved before the claim request (its task not known yet); starting: claimed, agent launching. */
  status: 'claiming' | 'starting' | 'running' | 'exited' | 'killed';
  pid: number | null;
  exit_code: number | null;
  started_at: string;
  worktree: string;
  branch: string;
  /** Bearer of the agent on the worker's relay (never a server credential). */
  relay_token: string;
  /** What the agent reported through the relay; null until it does. */
  report: { op: 'complete' | 'fail'; body: Record<string, unknown> } | null;
  /** Who asked for the kill of a `killed` session (POST /agents/{sid}/kill on the server). */
  killed_by?: string | null;
}

/** A record saved before a claim request, so a crash between the claim and its record loses no task (pure). */
export function claimingRecord(sid: string, role: string, at: string, worktree: string): WorkerSession {
  return {
    session_id: sid, task_id: '', task_title: '', tenant: '', role, claim_count: 0, max_retries: 0, status: 'claiming', pid: null, exit_code: null,
    started_at: at, worktree, branch: `agent/${sid}`, relay_token: '', report: null,
  };
}

/** The report a session's end makes (pure): the agent's own, else the local orchestrator's rules for an exit. */
export function endReport(s: WorkerSession, now: string): Omit<Report, 'attempts' | 'last_error'> | null {
  if (s.status === 'claiming') return null;
  const base = { session_id: s.session_id, task_id: s.task_id, created_at: now };
  if (s.report?.op === 'complete') return { ...base, op: 'complete', body: s.report.body, push: true };
  if (s.report?.op === 'fail') return { ...base, op: 'fail', body: s.report.body, push: false };
  const action = decideSession({
    sid: s.session_id, status: s.status, exitCode: s.exit_code,
    task: { status: 'in_progress', claimed_by_session: s.session_id, retry_count: Math.max(0, s.claim_count - 1), max_retries: s.max_retries },
    killedBy: s.killed_by ?? null,
  });
  if (action.kind !== 'exit') return null;
  // A released, failed or killed session's commits stay in this clone's graveyard (retireSession), as on a server.
  return { ...base, op: action.op, body: { reason: action.reason }, push: false };
}

/** Session records in one folder. */
export class SessionFiles {
  constructor(readonly dir: string) {}

  private path(sid: string): string {
    if (!isValidId(sid)) throw new Error(`invalid session id: ${JSON.stringify(sid).slice(0, 80)}`);
    return join(this.dir, `${sid}.json`);
  }

  async save(s: WorkerSession): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.path(s.session_id), JSON.stringify(s, null, 2) + '\n', { mode: 0o600 });
  }

  async remove(sid: string): Promise<void> {
    await rm(this.path(sid), { force: true });
  }

  async list(): Promise<WorkerSession[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: WorkerSession[] = [];
    for (const n of names) {
      if (!n.endsWith('.json') || !isValidId(n.slice(0, -5))) continue;
      try { out.push(JSON.parse(await readFile(join(this.dir, n), 'utf8')) as WorkerSession); } catch { /* skipped */ }
    }
    return out;
  }
}
