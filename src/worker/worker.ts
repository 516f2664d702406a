// `svc worker`: a cluster node that claims tasks of its roles from a central server and runs their
// agents here (src/runner, as the local orchestrator does), reporting back through the outbox.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { newSessionId } from '../agents/index.ts';
import { detectAdapters, isAlive, killGroup, readExitCode, resolveSandbox, exitFilePath, type AgentProcess, type DetectedAdapter, type SandboxState } from '../runner/index.ts';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { serverClient, why, type ServerClient } from './client.ts';
import { launchAgent, type ClaimedTask } from './launch.ts';
import { afterHeartbeat, register, versionProblem, NodeFile, type NodeIdentity } from './node.ts';
import type { WorkerOptions } from './options.ts';
import { Outbox } from './outbox.ts';
import { startRelay } from './relay.ts';
import { deliver, queueEnd, type ReportDeps } from './reports.ts';
import { fetchBase, fetchState } from './remote-git.ts';
import { SessionFiles, type WorkerSession } from './sessions.ts';
import { Waker } from './waker.ts';

export interface WorkerDeps {
  options: WorkerOptions;
  git: Git;
  layout: SddLayout;
  config: Config;
  clock: Clock;
  log: Logger;
  version: string;
  env: Readonly<Record<string, string | undefined>>;
  svcBinDir?: string;
  svcReadable?: readonly string[];
}

/** A fatal setup problem (version, registration refused): the CLI prints it and exits 1. */
export class WorkerError extends Error {}

const MIRROR_MIN_MS = 2_000;

// A session in memory: its record, our child (null when adopted after a restart), and whether its report is queued.
interface Live { rec: WorkerSession; child: AgentProcess | null; exited: boolean; queued: boolean }

/** Run the worker until `stop` aborts; then shut down as SIGTERM asks (INTERFACE.md Worker, issue point 7). */
export async function runWorker(d: WorkerDeps, stop: AbortSignal): Promise<void> {
  const w = new Worker(d, stop);
  await w.run();
}

class Worker {
  private readonly o: WorkerOptions;
  private readonly client: ServerClient;
  private readonly files: SessionFiles;
  private readonly outbox: Outbox;
  private readonly nodeFile: NodeFile;
  private readonly portFile: string;
  private readonly live = new Map<string, Live>();
  private readonly wake = new Waker();
  private node: NodeIdentity | null = null;
  private relayUrl = '';
  private sandbox: SandboxState = { mode: 'none', reason: 'not decided', bwrap: null };
  private detected: DetectedAdapter[] = [];
  private beating = false;
  private lastMirror = 0;
  private stateWarned = '';

  constructor(private readonly d: WorkerDeps, private readonly stop: AbortSignal) {
    this.o = d.options;
    this.client = serverClient(this.o.server, () => this.node?.token ?? this.o.token);
    this.files = new SessionFiles(`${d.layout.runtime}/worker/sessions`);
    this.outbox = new Outbox(`${d.layout.runtime}/outbox`);
    this.nodeFile = new NodeFile(`${d.layout.runtime}/worker/node.json`);
    this.portFile = `${d.layout.runtime}/worker/relay.port`;
    stop.addEventListener('abort', () => this.wake.now(), { once: true });
  }

  private get reportDeps(): ReportDeps {
    const { d } = this;
    return { client: this.client, git: d.git, layout: d.layout, outbox: this.outbox, files: this.files, clock: d.clock, log: d.log, server: this.o.server, token: () => this.node?.token ?? this.o.token };
  }

  async run(): Promise<void> {
    const { d, o } = this;
    await this.checkVersion();
    if (this.stop.aborted) return;
    this.detected = await detectAdapters({ agents: d.config.agents, pathEnv: d.env.PATH ?? '', cwd: d.git.root });
    this.sandbox = await resolveSandbox(d.config.agents.sandbox, d.env.PATH ?? '');
    if (this.sandbox.mode !== 'bwrap') d.log.warn(`agents run without a sandbox here (${this.sandbox.reason})`);
    const relay = await startRelay({
      client: this.client,
      sessionByToken: (t) => [...this.live.values()].map((l) => l.rec).find((r) => r.relay_token === t),
      report: (sid, op, body) => this.agentReported(sid, op, body),
    }, await readPort(this.portFile));
    this.relayUrl = relay.url;
    await mkdir(dirname(this.portFile), { recursive: true, mode: 0o700 });
    await writeFile(this.portFile, `${relay.port}\n`, { mode: 0o600 });
    try {
      await this.registerNode();
      if (this.stop.aborted) return;
      d.log.info(`worker ${o.name} (node ${this.node!.id}): ${o.slots} slot(s), roles ${o.roles.join(',')}, adapters ${this.detected.map((a) => a.name).join(', ') || 'none'}, server ${o.server}`);
      await this.recover();
      const beat = setInterval(() => void this.heartbeat().catch((err: Error) => d.log.warn(`heartbeat: ${err.message}`)), o.heartbeatMs);
      this.stop.addEventListener('abort', () => clearInterval(beat), { once: true });
      while (!this.stop.aborted) {
        await this.round(true);
        await this.wake.sleep(o.pollMs);
      }
      await this.shutdown();
    } finally {
      await relay.close();
    }
  }

  // One pass: reap, reports, the board mirror, then claims while slots are free (heartbeats have their own timer).
  private async round(claim: boolean): Promise<void> {
    await this.reap();
    await this.replay();
    await this.mirrorBoard();
    if (claim && !this.stop.aborted) await this.claim();
  }

  private async checkVersion(): Promise<void> {
    for (let warned = false; !this.stop.aborted;) {
      const a = await this.client.call('GET', '/', { timeoutMs: 10_000 });
      if (a.status === 200) {
        const problem = versionProblem(a.body, this.d.version);
        if (problem) throw new WorkerError(problem);
        return;
      }
      if (!warned) this.d.log.warn(`cannot reach the server at ${this.o.server} (${why(a)}); trying again every 5 s`);
      warned = true;
      await this.wake.sleep(5_000);
    }
  }

  private async registerNode(): Promise<void> {
    const known = this.node ?? (await this.nodeFile.read());
    for (let warned = ''; !this.stop.aborted;) {
      const r = await register(this.client, this.o, known, this.active());
      if ('node' in r) {
        if (known && known.id !== r.node.id) this.d.log.warn(`registered as a new node ${r.node.id} (was ${known.id}): reports on tasks of the old node will be fenced`);
        this.node = r.node;
        await this.nodeFile.write(r.node);
        return;
      }
      if ('fatal' in r) throw new WorkerError(r.fatal);
      if (warned !== r.retry) this.d.log.warn(`registration failed (${r.retry}); trying again every 5 s`);
      warned = r.retry;
      await this.wake.sleep(5_000);
    }
  }

  // Tasks still held: every session not yet reported and settled (INTERFACE: available_slots = slots − active).
  private active(): number {
    return this.live.size;
  }

  private async heartbeat(): Promise<void> {
    if (this.beating || !this.node) return;
    this.beating = true;
    try { await this.beat(); } finally { this.beating = false; }
  }

  private async beat(): Promise<void> {
    const active = this.active();
    const a = await this.client.call('POST', `/cluster/nodes/${this.node!.id}/heartbeat`, { body: { available_slots: Math.max(0, this.o.slots - active), active_agents: active }, timeoutMs: 10_000 });
    const next = afterHeartbeat(a);
    if (next === 'register') {
      this.d.log.warn(`heartbeat answered ${why(a)}: registering again`);
      await this.registerNode();
    } else if (next !== 'ok' && next !== 'retry') this.d.log.warn(`heartbeat refused: ${why(a)}`);
  }

  // Every poll, but at most every 2 s: a fast poll (tests, benches) must not turn into a fetch storm.
  private async mirrorBoard(): Promise<void> {
    if (this.d.clock.now() - this.lastMirror < Math.max(this.o.pollMs, MIRROR_MIN_MS)) return;
    this.lastMirror = this.d.clock.now();
    const err = await fetchState(this.d.git, this.o.server, this.node!.token);
    if (err && err !== this.stateWarned) this.d.log.warn(`board mirror: git fetch of /state.git failed: ${err}`);
    this.stateWarned = err ?? '';
  }

  private async claim(): Promise<void> {
    let fetched = false;
    for (const role of this.o.roles) {
      while (this.active() < this.o.slots && !this.stop.aborted) {
        const sid = newSessionId(role, randomBytes(4).toString('hex'));
        const a = await this.client.call('GET', `/tasks/next/${encodeURIComponent(role)}?claimed_by_session=${sid}`, { timeoutMs: 30_000 });
        if (a.status === 401) return void (await this.registerNode());
        if (a.status !== 200) {
          if (a.status !== 404) this.d.log.debug(`claim for ${role}: ${why(a)}`);
          break;
        }
        if (!fetched) {
          const err = await fetchBase(this.d.git, this.o.server, this.node!.token);
          if (err) this.d.log.warn(`git fetch of the base from /repo.git failed: ${err}`);
          fetched = true;
        }
        await this.start(sid, a.body as ClaimedTask & { tenant: string; claim_count: number; max_retries: number });
      }
    }
  }

  private async start(sid: string, task: ClaimedTask & { tenant: string; claim_count: number; max_retries: number }): Promise<void> {
    const rec: WorkerSession = {
      session_id: sid, task_id: task.id, task_title: task.title, tenant: task.tenant, role: task.role, claim_count: task.claim_count, max_retries: task.max_retries,
      status: 'starting', pid: null, exit_code: null, started_at: this.d.clock.iso(), worktree: this.d.layout.worktree(sid), branch: `agent/${sid}`,
      relay_token: randomBytes(24).toString('hex'), report: null,
    };
    await this.files.save(rec);
    const l: Live = { rec, child: null, exited: false, queued: false };
    this.live.set(sid, l);
    try {
      const child = await launchAgent({ ...this.d, sandbox: this.sandbox, detected: this.detected, adapter: this.o.adapter, model: this.o.model, relayUrl: this.relayUrl, randomBytes }, rec, task);
      l.child = child;
      Object.assign(rec, { status: 'running', pid: child.pid });
      await this.files.save(rec);
      void child.exited.then(() => { l.exited = true; this.wake.now(); });
      this.d.log.info(`task ${task.id}: agent started (session ${sid}, pid ${child.pid})`);
      void this.client.call('POST', `/tasks/${encodeURIComponent(task.id)}/progress`, { body: { message: `agent started on worker ${this.o.name}` } });
    } catch (err) {
      // INTERFACE.md Errors rule 6: the task goes back to open (the report of a session that never ran).
      this.d.log.error(`task ${task.id}: the agent could not be started: ${(err as Error).message}`);
      await this.settle(l);
    }
  }

  // The agent said complete or fail through the relay: kept in its record, then settled at once.
  private async agentReported(sid: string, op: 'complete' | 'fail', body: Record<string, unknown>): Promise<unknown> {
    const l = this.live.get(sid);
    if (!l) return { detail: 'session over' };
    l.rec.report = { op, body };
    await this.files.save(l.rec);
    this.wake.now();
    return { id: l.rec.task_id, title: l.rec.task_title, status: op === 'complete' ? 'done' : 'failed', detail: `kept by worker ${this.o.name}: its branch is pushed and the report sent to the server` };
  }

  // Exited agents and agents that reported; a reporting agent still running is stopped as a retired local one is.
  private async reap(): Promise<void> {
    for (const l of [...this.live.values()]) {
      const { rec } = l;
      if (rec.status === 'running' && (l.exited || (l.child === null && rec.pid !== null && !isAlive(rec.pid, Date.parse(rec.started_at))))) {
        Object.assign(rec, { status: 'exited', exit_code: await readExitCode(exitFilePath(this.d.layout, rec.session_id)) });
        await this.files.save(rec);
      }
      if (!l.queued && (rec.report || rec.status !== 'running')) await this.settle(l);
    }
  }

  private async settle(l: Live): Promise<void> {
    const { rec } = l;
    if (rec.status === 'running' && rec.pid !== null) await killGroup(rec.pid, { graceMs: 2_000 });
    if (rec.status === 'running') Object.assign(rec, { status: 'exited' });
    l.queued = await queueEnd(this.reportDeps, rec);
  }

  // Every report waiting in the outbox, oldest first; a session is over once its report is settled.
  private async replay(): Promise<void> {
    for (const r of await this.outbox.list()) {
      const outcome = await deliver(this.reportDeps, r);
      if (outcome === 'reauth') await this.registerNode();
      if (outcome === 'retry' || outcome === 'reauth') continue;
      this.live.delete(r.session_id);
    }
  }

  // At start: sessions a previous run left. Live agents are watched again; ended ones are reported.
  private async recover(): Promise<void> {
    const pending = new Set((await this.outbox.list()).map((r) => r.session_id));
    for (const rec of await this.files.list()) {
      const l: Live = { rec, child: null, exited: false, queued: pending.has(rec.session_id) };
      this.live.set(rec.session_id, l);
      if (l.queued) continue;
      if (rec.status === 'running' && rec.pid !== null && isAlive(rec.pid, Date.parse(rec.started_at))) {
        this.d.log.info(`adopted session ${rec.session_id} (task ${rec.task_id}, pid ${rec.pid})`);
        continue;
      }
      this.d.log.info(`session ${rec.session_id} (task ${rec.task_id}) ended while the worker was down: reporting it`);
    }
  }

  // Stop claiming; let agents finish for the grace period; give back what did not; leave the cluster.
  private async shutdown(): Promise<void> {
    const { d, o } = this;
    d.log.info(`stopping: no new claims; ${this.runningCount()} agent(s) get up to ${o.graceMs / 1000} s to finish`);
    const deadline = d.clock.now() + o.graceMs;
    while (this.runningCount() > 0 && d.clock.now() < deadline) {
      await this.round(false);
      if (this.runningCount() > 0) await this.wake.sleep(Math.min(o.pollMs, Math.max(0, deadline - d.clock.now())));
    }
    for (const l of this.live.values()) {
      if (l.rec.status !== 'running' || l.rec.report) continue;
      if (l.rec.pid !== null) await killGroup(l.rec.pid, { graceMs: 3_000 });
      Object.assign(l.rec, { status: 'exited', exit_code: null, report: null });
      l.queued = true;
      await this.outbox.put({ session_id: l.rec.session_id, task_id: l.rec.task_id, op: 'release', body: { reason: `worker ${o.name} stopped before the agent finished` }, push: false, created_at: d.clock.iso(), attempts: 0, last_error: null });
    }
    await this.reap();
    await this.replay();
    const a = await this.client.call('DELETE', `/cluster/nodes/${this.node!.id}`, { token: o.token, timeoutMs: 5_000 });
    if (a.status >= 200 && a.status < 300) d.log.info(`node ${this.node!.id} unregistered`);
    else d.log.warn(`unregistering node ${this.node!.id}: ${why(a)}`);
    d.log.info('worker stopped');
  }

  private runningCount(): number {
    return [...this.live.values()].filter((l) => l.rec.status === 'running' && !l.rec.report).length;
  }
}

const readPort = (file: string): Promise<number> => readFile(file, 'utf8').then((t) => Number(t.trim()) || 0, () => 0);
