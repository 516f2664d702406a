// How a worker gets work: long polls of `GET /tasks/next/<role>` while slots are free, and the fused
// `complete?next=<role>` when it reports a session's end. Each claim's session record is saved before the
// request; a claim that got no answer is settled later from the server's own record of that session.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { why, type Answer, type ServerClient } from './client.ts';
import type { ServerTask } from './launch.ts';
import type { NodeIdentity } from './node.ts';
import type { WorkerOptions } from './options.ts';
import type { Outbox, Report } from './outbox.ts';
import { deliver, type NextClaim, type ReportDeps } from './reports.ts';
import type { Runs } from './runs.ts';
import type { WorkerSession } from './sessions.ts';
import type { Waker } from '../lib/waker.ts';

/** What becomes of a claiming record once the server lists the tasks claimed by its session (pure). */
export type ClaimingFate = { kind: 'wait' } | { kind: 'drop' } | { kind: 'run'; task: ServerTask } | { kind: 'release'; task: ServerTask };

/**
 * `GET /tasks?claimed_by_session=<sid>` answered `a`: a task this node holds for the session runs (or, when
 * the worker stops, goes back); none means the claim never happened; no answer means ask again later.
 */
export function claimingFate(a: Pick<Answer, 'status' | 'body'>, sid: string, nodeId: string, stopping: boolean): ClaimingFate {
  if (a.status === 0 || a.status >= 500 || a.status === 429 || a.status === 401) return { kind: 'wait' };
  const list = a.status === 200 && Array.isArray(a.body) ? (a.body as ServerTask[]) : [];
  const task = list.find((t) => t.claimed_by_session === sid && t.node_id === nodeId && (t.status === 'claimed' || t.status === 'in_progress'));
  if (!task) return { kind: 'drop' };
  // Only a claim nobody started is run here; an in-progress one (it cannot be ours: no agent ran) goes back.
  return !stopping && task.status === 'claimed' ? { kind: 'run', task } : { kind: 'release', task };
}

/** The long poll's wait: the poll interval, at most the server's 60 s (INTERFACE `wait_s`). */
export function waitSeconds(pollMs: number): number {
  return Math.min(60, pollMs / 1000);
}

/** `roles` starting at the `turn`-th: with fewer free slots than roles, each role gets its turn. */
export function rotate<T>(roles: readonly T[], turn: number): T[] {
  const k = roles.length ? turn % roles.length : 0;
  return [...roles.slice(k), ...roles.slice(0, k)];
}

/** What claiming needs from the worker. */
export interface ClaimsDeps {
  o: WorkerOptions;
  client: ServerClient;
  runs: Runs;
  outbox: Outbox;
  report: ReportDeps;
  clock: Clock;
  log: Logger;
  stop: AbortSignal;
  /** Ends the claim loop's pause when a slot frees (or the worker stops). */
  slots: Waker;
  node(): NodeIdentity | null;
  reauth(): Promise<void>;
  /** Fetch the server's base branch before an agent starts. */
  fetchBase(): Promise<void>;
}

/** The worker's claims and reports. */
export class Claims {
  private turn = 0;

  constructor(private readonly x: ClaimsDeps) {}

  /** Until the worker stops: long-poll the roles while slots are free (one poll per free slot). */
  async loop(): Promise<void> {
    const { o, runs, stop, clock } = this.x;
    while (!stop.aborted) {
      const free = o.slots - runs.active();
      const t0 = clock.now();
      const got = free <= 0 ? false : await this.claimSome(free).catch((err: Error) => void this.x.log.error(`claiming failed: ${err.message}`));
      if (got) continue;
      // Full, or an answer before the wait was over (refused, cordoned, unreachable): no request storm.
      const left = o.pollMs - (clock.now() - t0);
      if (left > 0 && !stop.aborted) await this.x.slots.sleep(left);
    }
  }

  private async claimSome(free: number): Promise<boolean> {
    const waitS = waitSeconds(this.x.o.pollMs);
    return (await Promise.all(rotate(this.x.o.roles, this.turn++).slice(0, free).map((role) => this.claimOne(role, waitS)))).includes(true);
  }

  // One long poll; the SIGTERM aborts it (the record then says what the server may have done).
  private async claimOne(role: string, waitS: number): Promise<boolean> {
    const rec = await this.x.runs.reserve(role);
    const path = `/tasks/next/${encodeURIComponent(role)}?claimed_by_session=${rec.session_id}&wait_s=${waitS}`;
    const a = await this.x.client.call('GET', path, { timeoutMs: waitS * 1000 + 30_000, signal: this.x.stop });
    if (a.status === 200) {
      await this.begin(rec, a.body as ServerTask);
      return true;
    }
    if (a.status === 0 || a.status >= 500) {
      this.x.runs.unanswered(rec.session_id);
      return false;
    }
    await this.x.runs.drop(rec.session_id);
    if (a.status === 401) await this.x.reauth();
    else if (a.status !== 404) this.x.log.debug(`claim for ${role}: ${why(a)}`);
    return false;
  }

  private async begin(rec: WorkerSession, task: ServerTask): Promise<void> {
    await this.x.fetchBase();
    await this.x.runs.start(rec, task);
  }

  /** Every report in the outbox, side by side (each its own session's); a first complete or fail also claims the next task. */
  async replay(): Promise<void> {
    await Promise.all((await this.x.outbox.list()).map((r) => this.deliverOne(r)));
  }

  private async deliverOne(r: Report): Promise<void> {
    const role = this.fusable(r);
    const ask = role ? await this.x.runs.reserve(role) : null;
    const { outcome, next } = await deliver(this.x.report, r, ask ? { role: role!, session: ask.session_id } : undefined);
    if (outcome === 'reauth') await this.x.reauth();
    if (outcome !== 'retry' && outcome !== 'reauth') this.x.runs.ended(r.session_id);
    if (ask) await this.settleNext(ask, next);
  }

  // The role of the next claim fused with this report, or null: a first delivery (replays use the plain call) of a
  // complete or fail, by a session this worker holds (its slot goes to the next one), of a role it claims, not stopping.
  private fusable(r: Report): string | null {
    const { o, runs, stop } = this.x;
    if (r.attempts > 0 || (r.op !== 'complete' && r.op !== 'fail') || stop.aborted) return null;
    const role = runs.get(r.session_id)?.role;
    return role && o.roles.includes(role) ? role : null;
  }

  private async settleNext(rec: WorkerSession, next: NextClaim): Promise<void> {
    if (next === 'unknown') this.x.runs.unanswered(rec.session_id);
    else if (next === null) await this.x.runs.drop(rec.session_id);
    else await this.begin(rec, next);
  }

  /** Claiming records without an answer: the server's record of their session says whether the claim happened. */
  async resolve(): Promise<void> {
    const node = this.x.node();
    if (!node) return;
    for (const rec of this.x.runs.unresolved()) {
      const a = await this.x.client.call('GET', `/tasks?claimed_by_session=${encodeURIComponent(rec.session_id)}`, { timeoutMs: 10_000 });
      const fate = claimingFate(a, rec.session_id, node.id, this.x.stop.aborted);
      if (fate.kind === 'wait') continue;
      if (fate.kind === 'drop') await this.x.runs.drop(rec.session_id);
      else if (fate.kind === 'run') {
        this.x.log.info(`session ${rec.session_id}: its claim of task ${fate.task.id} went through; starting the agent`);
        await this.begin(rec, fate.task);
      } else await this.x.runs.giveBack(rec, fate.task, `worker ${this.x.o.name} claimed it but did not start its agent`);
    }
  }
}
