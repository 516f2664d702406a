// `svc worker`: a cluster node that claims tasks of its roles from a central server and runs their
// agents here (src/runner, as the local orchestrator does), reporting back through the outbox. This file
// is the node's life: version, registration, heartbeats (which carry kill requests), the loop, shutdown.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { detectAdapters, resolveSandbox, type DetectedAdapter, type SandboxState } from '../runner/index.ts';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { Claims } from './claims.ts';
import { serverClient, why, type ServerClient } from './client.ts';
import { afterHeartbeat, killsOf, register, serverVersion, stateHeadOf, NodeFile, type NodeIdentity } from './node.ts';
import type { WorkerOptions } from './options.ts';
import { Outbox } from './outbox.ts';
import { startRelayKept } from './relay.ts';
import type { ReportDeps } from './reports.ts';
import { fetchBase, fetchState } from './remote-git.ts';
import { Runs } from './runs.ts';
import { SessionFiles } from './sessions.ts';
import { Waker } from '../lib/waker.ts';

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

/** Run the worker until `stop` aborts; then shut down as SIGTERM asks (INTERFACE.md Worker, issue point 7). */
export async function runWorker(d: WorkerDeps, stop: AbortSignal): Promise<void> {
  await new Worker(d, stop).run();
}

class Worker {
  private readonly o: WorkerOptions;
  private readonly client: ServerClient;
  private readonly outbox: Outbox;
  private readonly nodeFile: NodeFile;
  private readonly wake = new Waker();
  private readonly slots = new Waker();
  private readonly runs: Runs;
  private readonly claims: Claims;
  private node: NodeIdentity | null = null;
  private relayUrl = '';
  private sandbox: SandboxState = { mode: 'none', reason: 'not decided', bwrap: null };
  private detected: DetectedAdapter[] = [];
  private beating = false;
  private lastMirror = 0;
  private stateWarned = '';
  // The state commit the last heartbeat named (undefined: not said), and the one last mirrored.
  private serverState: string | null | undefined;
  private mirrored: string | null | undefined;
  private fetching: Promise<void> | null = null;
  private registering: Promise<void> | null = null;

  constructor(private readonly d: WorkerDeps, private readonly stop: AbortSignal) {
    const o = (this.o = d.options);
    this.client = serverClient(o.server, () => this.node?.token ?? o.token);
    const files = new SessionFiles(`${d.layout.runtime}/worker/sessions`);
    this.outbox = new Outbox(`${d.layout.runtime}/outbox`);
    this.nodeFile = new NodeFile(`${d.layout.runtime}/worker/node.json`);
    const report: ReportDeps = { client: this.client, git: d.git, layout: d.layout, outbox: this.outbox, files, clock: d.clock, log: d.log, server: o.server, token: () => this.node?.token ?? o.token };
    this.runs = new Runs({
      layout: d.layout, clock: d.clock, log: d.log, client: this.client, files, outbox: this.outbox, report, name: o.name,
      launch: () => ({ ...d, sandbox: this.sandbox, detected: this.detected, adapter: o.adapter, model: o.model, relayUrl: this.relayUrl, randomBytes }),
      changed: () => this.wake.now(), freed: () => this.slots.now(),
    });
    this.claims = new Claims({
      o, client: this.client, runs: this.runs, outbox: this.outbox, report, clock: d.clock, log: d.log, stop, slots: this.slots,
      node: () => this.node, reauth: () => this.registerNode(), fetchBase: () => this.fetchBase(),
    });
    stop.addEventListener('abort', () => { this.wake.now(); this.slots.now(); }, { once: true });
  }

  async run(): Promise<void> {
    const { d, o } = this;
    const problem = await serverVersion(this.client, d.version, this.stop, (ms) => this.wake.sleep(ms), d.log);
    if (problem) throw new WorkerError(problem);
    if (this.stop.aborted) return;
    this.detected = await detectAdapters({ agents: d.config.agents, pathEnv: d.env.PATH ?? '', cwd: d.git.root });
    this.sandbox = await resolveSandbox(d.config.agents.sandbox, d.env.PATH ?? '');
    if (this.sandbox.mode !== 'bwrap') d.log.warn(`agents run without a sandbox here (${this.sandbox.reason})`);
    const relay = await startRelayKept({ client: this.client, sessionByToken: (t) => this.runs.byToken(t), report: (sid, op, body) => this.runs.agentReported(sid, op, body) }, `${d.layout.runtime}/worker/relay.port`);
    this.relayUrl = relay.url;
    try {
      await this.registerNode();
      if (this.stop.aborted) return;
      d.log.info(`worker ${o.name} (node ${this.node!.id}): ${o.slots} slot(s), roles ${o.roles.join(',')}, adapters ${this.detected.map((a) => a.name).join(', ') || 'none'}, server ${o.server}`);
      await this.runs.recover();
      await this.round();
      const beat = setInterval(() => void this.heartbeat().catch((err: Error) => d.log.warn(`heartbeat: ${err.message}`)), o.heartbeatMs);
      this.stop.addEventListener('abort', () => clearInterval(beat), { once: true });
      const claiming = this.claims.loop();
      while (!this.stop.aborted) {
        await this.wake.sleep(o.pollMs);
        await this.round();
      }
      await claiming;
      await this.shutdown();
    } finally {
      await relay.close();
    }
  }

  // One pass: ended agents, claims without an answer, reports (with the fused next claim), the board mirror.
  private async round(): Promise<void> {
    await this.runs.reap();
    await this.claims.resolve();
    await this.claims.replay();
    await this.mirrorBoard();
  }

  // Heartbeat, claims and reports may all find the token refused at once: one registration serves them.
  private registerNode(): Promise<void> {
    this.registering ??= this.registerOnce().finally(() => { this.registering = null; });
    return this.registering;
  }

  private async registerOnce(): Promise<void> {
    const known = this.node ?? (await this.nodeFile.read());
    for (let warned = ''; !this.stop.aborted;) {
      const r = await register(this.client, this.o, known, this.runs.holding());
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

  private async heartbeat(): Promise<void> {
    if (this.beating || !this.node) return;
    this.beating = true;
    try { await this.beat(); } finally { this.beating = false; }
  }

  // Free slots out; kill requests for this node's agents back (POST /agents/{sid}/kill on the server).
  private async beat(): Promise<void> {
    const active = this.runs.holding();
    const a = await this.client.call('POST', `/cluster/nodes/${this.node!.id}/heartbeat`, { body: { available_slots: Math.max(0, this.o.slots - active), active_agents: active }, timeoutMs: 10_000 });
    const next = afterHeartbeat(a);
    if (next === 'ok') {
      this.serverState = stateHeadOf(a.body);
      await this.runs.kill(killsOf(a.body));
    }
    else if (next === 'register') {
      this.d.log.warn(`heartbeat answered ${why(a)}: registering again`);
      await this.registerNode();
    } else if (next !== 'retry') this.d.log.warn(`heartbeat refused: ${why(a)}`);
  }

  // When the heartbeat says the state moved since the last mirror (every poll when it does not say), at most
  // every 2 s: a fast poll (tests, benches) must not turn into a fetch storm, nor an idle board into fetches.
  private async mirrorBoard(): Promise<void> {
    if (this.d.clock.now() - this.lastMirror < Math.max(this.o.pollMs, MIRROR_MIN_MS)) return;
    const target = this.serverState;
    if (target === null || (target !== undefined && target === this.mirrored)) return; // no board yet, or mirrored
    this.lastMirror = this.d.clock.now();
    const err = await fetchState(this.d.git, this.o.server, this.node!.token);
    if (!err) this.mirrored = target;
    if (err && err !== this.stateWarned) this.d.log.warn(`board mirror: git fetch of /state.git failed: ${err}`);
    this.stateWarned = err ?? '';
  }

  // Agents fork from the server's latest base; claims that land together share one fetch.
  private fetchBase(): Promise<void> {
    this.fetching ??= fetchBase(this.d.git, this.o.server, this.node!.token).then((err) => {
      if (err) this.d.log.warn(`git fetch of the base from /repo.git failed: ${err}`);
    }).finally(() => { this.fetching = null; });
    return this.fetching;
  }

  // Claims have stopped; agents finish for the grace period; what did not finish goes back; leave the cluster.
  private async shutdown(): Promise<void> {
    const { d, o } = this;
    d.log.info(`stopping: no new claims; ${this.runs.running()} agent(s) get up to ${o.graceMs / 1000} s to finish`);
    const deadline = d.clock.now() + o.graceMs;
    for (;;) {
      await this.round();
      if (this.runs.running() === 0 || d.clock.now() >= deadline) break;
      await this.wake.sleep(Math.min(o.pollMs, Math.max(0, deadline - d.clock.now())));
    }
    await this.runs.abandon(`worker ${o.name} stopped before the agent finished`);
    await this.round();
    // DELETE needs node:admin (INTERFACE.md): the cluster secret has it; a node:register token does not.
    const a = await this.client.call('DELETE', `/cluster/nodes/${this.node!.id}`, { token: o.token, timeoutMs: 5_000 });
    if (a.status >= 200 && a.status < 300) d.log.info(`node ${this.node!.id} unregistered`);
    else d.log.warn(`unregistering node ${this.node!.id}: ${why(a)}`);
    d.log.info('worker stopped');
  }
}
