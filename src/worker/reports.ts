// A session's end on a worker: its report goes to the outbox first, then to the server (the agent branch
// pushed before a completion); delivered or final, the session retires like a local one.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { retireSession } from '../runner/index.ts';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { why, type Answer, type ServerClient } from './client.ts';
import type { ServerTask } from './launch.ts';
import { outcomeOf, type Outbox, type Outcome, type Report } from './outbox.ts';
import { BASE_BRANCH, pushBranch } from './remote-git.ts';
import { endReport, type SessionFiles, type WorkerSession } from './sessions.ts';

/** What delivering reports needs. */
export interface ReportDeps {
  client: ServerClient;
  git: Git;
  layout: SddLayout;
  outbox: Outbox;
  files: SessionFiles;
  clock: Clock;
  log: Logger;
  server: string;
  /** The node token now (it changes when the worker registers again). */
  token(): string;
}

/** Put the end of an exited (or reported) session in the outbox; false when there is nothing to report yet. */
export async function queueEnd(d: ReportDeps, s: WorkerSession): Promise<boolean> {
  const r = endReport(s, d.clock.iso());
  if (!r) return false;
  await d.outbox.put({ ...r, attempts: 0, last_error: null });
  return true;
}

/** The next claim a complete or fail asks for in the same request (`?next=<role>&next_session=<sid>`). */
export interface NextAsk {
  role: string;
  session: string;
}

/** What a fused call brought: the next task, none (not asked, or the server claimed nothing), or unknown (no answer). */
export type NextClaim = ServerTask | null | 'unknown';

/** The next task in a fused call's answer (pure): without an answer (none, 5xx) nobody knows whether it claimed. */
export function nextOf(a: Pick<Answer, 'status' | 'body'>): NextClaim {
  if (a.status === 0 || a.status >= 500) return 'unknown';
  const next = a.status === 200 && a.body && typeof a.body === 'object' ? (a.body as { next?: unknown }).next : null;
  return next && typeof next === 'object' && typeof (next as ServerTask).id === 'string' ? (next as ServerTask) : null;
}

/** Try one report: push, then the call (fused with the next claim when `ask` is given). `retry` and `reauth` keep it for later. */
export async function deliver(d: ReportDeps, r: Report, ask?: NextAsk): Promise<{ outcome: Outcome; next: NextClaim }> {
  if (r.push) {
    const pushed = await pushBranch(d.git, d.server, d.token(), `agent/${r.session_id}`);
    if (!pushed.ok && !pushed.final) return { outcome: await keep(d, r, `push: ${pushed.why}`, 'retry'), next: null };
    if (!pushed.ok) {
      d.log.warn(`task ${r.task_id}: the server refused agent/${r.session_id} (${pushed.why}); the report is dropped, the work stays in this clone`);
      return { outcome: await finalize(d, r, 'fenced'), next: null };
    }
  }
  const query = ask ? `?next=${encodeURIComponent(ask.role)}&next_session=${encodeURIComponent(ask.session)}` : '';
  const a = await d.client.call('POST', `/tasks/${encodeURIComponent(r.task_id)}/${r.op}${query}`, { body: r.body });
  const next = ask ? nextOf(a) : null;
  const outcome = outcomeOf(a);
  if (outcome === 'retry' || outcome === 'reauth') return { outcome: await keep(d, r, why(a), outcome), next };
  if (outcome === 'fenced') d.log.warn(`task ${r.task_id}: ${r.op} fenced, final: ${why(a)}`);
  else if (outcome !== 'delivered') d.log.warn(`task ${r.task_id}: ${r.op} answered ${why(a)}; final`);
  else d.log.info(`task ${r.task_id}: ${r.op} reported (session ${r.session_id})`);
  return { outcome: await finalize(d, r, outcome), next };
}

async function keep(d: ReportDeps, r: Report, error: string, outcome: Outcome): Promise<Outcome> {
  if (r.attempts === 0 || r.last_error !== error) d.log.warn(`task ${r.task_id}: ${r.op} kept in the outbox for later (${error})`);
  await d.outbox.put({ ...r, attempts: r.attempts + 1, last_error: error });
  return outcome;
}

// The report is settled: the worktree goes; work the server did not take stays in this clone's graveyard.
async function finalize(d: ReportDeps, r: Report, outcome: Outcome): Promise<Outcome> {
  const delivered = outcome === 'delivered' && r.push;
  await (delivered ? forget(d, r.session_id) : retireSession(d, r.session_id, BASE_BRANCH).then((res) => {
    if (res.graveyard.length) d.log.info(`session ${r.session_id}: work kept in ${res.graveyard.join(', ')}`);
  })).catch((err: Error) => d.log.warn(`session ${r.session_id}: retiring its worktree failed: ${err.message}`));
  await d.files.remove(r.session_id);
  await d.outbox.drop(r.session_id);
  return outcome;
}

// The server holds the pushed branch: remove the worktree and the local branch.
async function forget(d: ReportDeps, sid: string): Promise<void> {
  await d.git.exclusive(async () => {
    await d.git.run(['worktree', 'remove', '--force', d.layout.worktree(sid)], { allowFail: true });
    await d.git.run(['worktree', 'prune']);
    await d.git.run(['update-ref', '-d', `refs/heads/agent/${sid}`], { allowFail: true });
  });
}
