// The agent sessions of one worker: a record saved before each claim request, the agent started with the
// runner once the claim answers, reaped when it exits, killed when the server asks, its end queued in the
// outbox. Every record lives under `.sdd/runtime/worker/sessions/` until its report is settled.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { newSessionId } from '../agents/index.ts';
import { exitFilePath, isAlive, killGroup, readExitCode, type AgentProcess } from '../runner/index.ts';
import type { SddLayout } from '../store/layout.ts';
import type { ServerClient } from './client.ts';
import { launchAgent, type LaunchDeps, type ServerTask } from './launch.ts';
import type { Outbox } from './outbox.ts';
import { queueEnd, type ReportDeps } from './reports.ts';
import { claimingRecord, type SessionFiles, type WorkerSession } from './sessions.ts';

/** A session in memory: its record, our child (null when adopted), whether its report is queued, and whether a claim, launch or kill owns it now. */
interface Live { rec: WorkerSession; child: AgentProcess | null; exited: boolean; queued: boolean; busy: boolean }

/** What the sessions need from the worker. */
export interface RunsDeps {
  layout: SddLayout;
  clock: Clock;
  log: Logger;
  client: ServerClient;
  files: SessionFiles;
  outbox: Outbox;
  report: ReportDeps;
  /** The worker's name, for the board and for release reasons. */
  name: string;
  launch(): LaunchDeps;
  /** An agent exited, reported or was killed: the loop should look now. */
  changed(): void;
  /** A session left: its slot is free. */
  freed(): void;
}

/** The sessions of this worker. */
export class Runs {
  private readonly live = new Map<string, Live>();

  constructor(private readonly x: RunsDeps) {}

  /** Sessions holding a slot: claiming, starting, running, or ended and not yet reported (INTERFACE: available_slots = slots − active). */
  active(): number {
    return this.live.size;
  }

  /** Sessions that hold (or may hold) a task: all but the claims whose request is still waiting (what heartbeats report). */
  holding(): number {
    return [...this.live.values()].filter((l) => !(l.rec.status === 'claiming' && l.busy)).length;
  }

  /** Agents still working (running, not reported). */
  running(): number {
    return [...this.live.values()].filter((l) => l.rec.status === 'running' && !l.rec.report).length;
  }

  /** The record of session `sid`, if this worker holds it. */
  get(sid: string): WorkerSession | undefined {
    return this.live.get(sid)?.rec;
  }

  /** The session whose agent holds this relay token. */
  byToken(token: string): WorkerSession | undefined {
    return token ? [...this.live.values()].map((l) => l.rec).find((r) => r.relay_token === token) : undefined;
  }

  /** Claiming records no request is waiting on (the claim got no answer, or a restart found them). */
  unresolved(): WorkerSession[] {
    return [...this.live.values()].filter((l) => l.rec.status === 'claiming' && !l.busy).map((l) => l.rec);
  }

  /** Save the record of a new session of `role` before its claim request: a crash after the claim leaves a trace. */
  async reserve(role: string): Promise<WorkerSession> {
    const sid = newSessionId(role, randomBytes(4).toString('hex'));
    const rec = claimingRecord(sid, role, this.x.clock.iso(), this.x.layout.worktree(sid));
    this.live.set(sid, { rec, child: null, exited: false, queued: false, busy: true });
    await this.x.files.save(rec);
    return rec;
  }

  /** The claim took nothing: forget the session. */
  async drop(sid: string): Promise<void> {
    this.live.delete(sid);
    await this.x.files.remove(sid);
    this.x.freed();
  }

  /** The claim got no answer: leave the record for `Claims.resolve`, which asks the server. */
  unanswered(sid: string): void {
    const l = this.live.get(sid);
    if (l) l.busy = false;
  }

  /** A claimed task: start its agent. One that cannot start gives the task back (INTERFACE.md Errors rule 6). */
  async start(rec: WorkerSession, task: ServerTask): Promise<void> {
    const l = this.live.get(rec.session_id) ?? { rec, child: null, exited: false, queued: false, busy: true };
    this.live.set(rec.session_id, l);
    l.busy = true;
    Object.assign(rec, {
      task_id: task.id, task_title: task.title, tenant: task.tenant, role: task.role, claim_count: task.claim_count, max_retries: task.max_retries,
      status: 'starting', started_at: this.x.clock.iso(), relay_token: randomBytes(24).toString('hex'),
    });
    await this.x.files.save(rec);
    try {
      const child = await launchAgent(this.x.launch(), rec, task);
      l.child = child;
      Object.assign(rec, { status: 'running', pid: child.pid });
      await this.x.files.save(rec);
      void child.exited.then(() => { l.exited = true; this.x.changed(); });
      this.x.log.info(`task ${task.id}: agent started (session ${rec.session_id}, pid ${child.pid})`);
      void this.x.client.call('POST', `/tasks/${encodeURIComponent(task.id)}/progress`, { body: { message: `agent started on worker ${this.x.name}` } });
    } catch (err) {
      this.x.log.error(`task ${task.id}: the agent could not be started: ${(err as Error).message}`);
      await this.settle(l);
    } finally {
      l.busy = false;
    }
  }

  /** The claiming record's task is ours but will not run here (the worker stops): give it back. */
  async giveBack(rec: WorkerSession, task: ServerTask, reason: string): Promise<void> {
    const l = this.live.get(rec.session_id);
    if (!l) return;
    Object.assign(rec, { task_id: task.id, task_title: task.title, tenant: task.tenant, status: 'exited' });
    await this.x.files.save(rec);
    await this.x.outbox.put({ session_id: rec.session_id, task_id: task.id, op: 'release', body: { reason }, push: false, created_at: this.x.clock.iso(), attempts: 0, last_error: null });
    Object.assign(l, { queued: true, busy: false });
  }

  /** The agent said complete or fail through the relay: kept in its record, then settled at once. */
  async agentReported(sid: string, op: 'complete' | 'fail', body: Record<string, unknown>): Promise<unknown> {
    const l = this.live.get(sid);
    if (!l) return { detail: 'session over' };
    l.rec.report = { op, body };
    await this.x.files.save(l.rec);
    this.x.changed();
    return { id: l.rec.task_id, title: l.rec.task_title, status: op === 'complete' ? 'done' : 'failed', detail: `kept by worker ${this.x.name}: its branch is pushed and the report sent to the server` };
  }

  /** Exited agents and agents that reported; a reporting agent still running is stopped as a retired local one is. */
  async reap(): Promise<void> {
    for (const l of [...this.live.values()]) {
      const { rec } = l;
      if (l.busy || l.queued || rec.status === 'claiming') continue;
      if (rec.status === 'running' && (l.exited || (l.child === null && rec.pid !== null && !isAlive(rec.pid, Date.parse(rec.started_at))))) {
        Object.assign(rec, { status: 'exited', exit_code: await readExitCode(exitFilePath(this.x.layout, rec.session_id)) });
        await this.x.files.save(rec);
      }
      if (rec.report || rec.status !== 'running') await this.settle(l);
    }
  }

  private async settle(l: Live): Promise<void> {
    const { rec } = l;
    if (rec.status === 'running' && rec.pid !== null) await killGroup(rec.pid, { graceMs: 2_000 });
    if (rec.status === 'running') Object.assign(rec, { status: 'exited' });
    l.queued = await queueEnd(this.x.report, rec);
  }

  /** Kill the agents the server asked for, as the local orchestrator does: the task is then blocked, "killed by <who>". */
  async kill(requests: readonly { session_id: string; requested_by: string }[]): Promise<void> {
    for (const k of requests) {
      const l = this.live.get(k.session_id);
      if (!l || l.busy || l.rec.status !== 'running' || l.rec.report || l.rec.pid === null) continue;
      l.busy = true;
      try {
        const how = await killGroup(l.rec.pid, { graceMs: 3_000 });
        Object.assign(l.rec, { status: 'killed', exit_code: await readExitCode(exitFilePath(this.x.layout, k.session_id)), killed_by: k.requested_by });
        await this.x.files.save(l.rec);
        this.x.log.warn(`session ${k.session_id} (task ${l.rec.task_id}): agent killed on request of ${k.requested_by} (${how})`);
      } finally {
        l.busy = false;
      }
      this.x.changed();
    }
  }

  /** The session's report is settled: it leaves. */
  ended(sid: string): void {
    if (this.live.delete(sid)) this.x.freed();
  }

  /** At start: sessions a previous run left. Live agents are watched again; ended ones are reported; claims are asked about. */
  async recover(): Promise<void> {
    const pending = new Set((await this.x.outbox.list()).map((r) => r.session_id));
    for (const rec of await this.x.files.list()) {
      const l: Live = { rec, child: null, exited: false, queued: pending.has(rec.session_id), busy: false };
      this.live.set(rec.session_id, l);
      if (l.queued) continue;
      const { log } = this.x;
      if (rec.status === 'claiming') log.info(`session ${rec.session_id}: a claim for ${rec.role} got no answer before the worker stopped; asking the server`);
      else if (rec.status === 'running' && rec.pid !== null && isAlive(rec.pid, Date.parse(rec.started_at))) log.info(`adopted session ${rec.session_id} (task ${rec.task_id}, pid ${rec.pid})`);
      else log.info(`session ${rec.session_id} (task ${rec.task_id}) ended while the worker was down: reporting it`);
    }
  }

  /** The grace period is over: stop the agents still working and give their tasks back. */
  async abandon(reason: string): Promise<void> {
    for (const l of this.live.values()) {
      if (l.rec.status !== 'running' || l.rec.report) continue;
      if (l.rec.pid !== null) await killGroup(l.rec.pid, { graceMs: 3_000 });
      Object.assign(l.rec, { status: 'exited', exit_code: null, report: null });
      l.queued = true;
      await this.x.outbox.put({ session_id: l.rec.session_id, task_id: l.rec.task_id, op: 'release', body: { reason }, push: false, created_at: this.x.clock.iso(), attempts: 0, last_error: null });
    }
  }
}
