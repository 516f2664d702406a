import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import type { Config } from '../config/index.ts';
import type { Timers } from '../lib/timers.ts';
import { detectAdapters, resolveSandbox, type SandboxState, currentBranch } from '../runner/index.ts';
import { dispatchReady, type DispatchState } from './dispatch.ts';
import { finishSession } from './finish.ts';
import { actOnKills, adoptSessions, reapExited } from './reap.ts';
import { adoptRemoteDone } from './remote.ts';
import { randomHex8, type AgentContext, type AgentDeps, type Session, type SessionRecord } from './sessions.ts';
import { settleSessions } from './settle.ts';
import { detectStalls } from './stall.ts';
import { TickLoop } from './tick-loop.ts';

/** What the orchestrator is built from (cli/runtime.ts passes the server's own). */
export interface OrchestratorDeps extends AgentDeps {
  /** Re-read `.sdd/config.yaml` (with env applied); called when the file changes. */
  reloadConfig?: () => Config;
  randomHex?: () => string;
  randomBytes?: (n: number) => Uint8Array;
  /** Debounce of watcher-triggered ticks (default 50 ms). */
  debounceMs?: number;
  /** The tick interval and debounce run on these (default: the real ones). */
  timers?: Timers;
}

/** The tick loop of `svc up` and the sessions it runs. */
export interface Orchestrator {
  /** Reconcile sessions and worktrees left by a previous run, then tick every tick_ms and on watched changes. */
  start(serverUrl: string, opts?: { timers?: boolean }): Promise<void>;
  /** Close every timer and watcher and wait for the running tick and finishing jobs; agents keep running. */
  stop(): Promise<void>;
  /** Run one whole tick now (after the one in progress, if any). */
  tick(): Promise<void>;
  /** Ask for a tick soon (debounced). */
  requestTick(): void;
  /** Records of the sessions the orchestrator holds (running, or waiting to be finished). */
  sessions(): SessionRecord[];
  /** The branch agents fork from and merge into. */
  baseBranch(): Promise<string>;
  /** Resolves when no finishing job (gates, merge) runs. */
  whenIdle(): Promise<void>;
  /** How agents and gates are contained now (for /status and session records). */
  sandbox(): SandboxState;
}

/** Build the orchestrator; nothing runs until start(). */
export function createOrchestrator(deps: OrchestratorDeps): Orchestrator {
  return new TickingOrchestrator(deps);
}

class TickingOrchestrator implements Orchestrator {
  private readonly ctx: AgentContext;
  private readonly dstate: DispatchState = { cursor: null, warned: new Set() };
  private readonly jobs = new Set<Promise<void>>();
  private readonly closers: (() => unknown)[] = [];
  private readonly loop: TickLoop;
  private reloadPending = false;
  // The file's own values of keys a command-line flag may override (a flag wins until the file changes the key).
  private fileValues: { max_agents: number; batch_size: number };

  constructor(private readonly deps: OrchestratorDeps) {
    this.ctx = {
      root: deps.root, layout: deps.layout, git: deps.git, store: deps.store, svc: deps.svc, clock: deps.clock, log: deps.log,
      env: deps.env, config: deps.config, base: '', serverUrl: '', sessions: new Map(), detected: [], svcBinDir: deps.svcBinDir, svcReadable: deps.svcReadable,
      sandbox: { mode: 'none', reason: 'not decided: the orchestrator has not started (no agent runs)', bwrap: null },
      randomHex: deps.randomHex ?? randomHex8, randomBytes: deps.randomBytes ?? randomBytes, observer: deps.observer,
    };
    this.fileValues = { max_agents: deps.config.orchestrator.max_agents, batch_size: deps.config.orchestrator.batch_size };
    this.loop = new TickLoop(() => this.runTick(), { debounceMs: deps.debounceMs ?? 50, onError: (err) => this.ctx.log.error('tick failed', err), ...(deps.timers ? { timers: deps.timers } : {}) });
  }

  async start(serverUrl: string, opts: { timers?: boolean } = {}): Promise<void> {
    const { ctx } = this;
    ctx.serverUrl = serverUrl;
    ctx.base = await this.baseBranch().catch((err: Error) => { ctx.log.error(`${err.message}; no agents will be dispatched`); return ''; });
    const file = this.readConfigFile();
    if (file) this.fileValues = { max_agents: file.orchestrator.max_agents, batch_size: file.orchestrator.batch_size };
    await this.detect();
    await this.resolveSandbox();
    await adoptSessions(ctx);
    const names = ctx.detected.map((d) => d.name).join(', ') || 'none';
    ctx.log.info(`orchestrator: base ${ctx.base || '(none)'}, tick ${ctx.config.orchestrator.tick_ms} ms, max_agents ${ctx.config.orchestrator.max_agents}, adapters on PATH: ${names}`);
    if (opts.timers === false) return;
    this.watchFiles();
    this.loop.start(ctx.config.orchestrator.tick_ms);
    this.loop.kick(true);
  }

  async stop(): Promise<void> {
    for (const close of this.closers.splice(0)) await close();
    await this.loop.stop();
    await this.whenIdle();
  }

  tick(): Promise<void> { return this.loop.once(); }
  requestTick(): void { this.loop.request(); }
  sessions(): SessionRecord[] { return [...this.ctx.sessions.values()].map((s) => ({ ...s.rec })); }
  sandbox(): SandboxState { return { ...this.ctx.sandbox }; }

  async baseBranch(): Promise<string> {
    if (this.ctx.base) return this.ctx.base;
    const base = this.deps.config.merge.base ?? (await currentBranch(this.deps.git));
    if (!base) throw new Error('HEAD is detached and merge.base is not set in .sdd/config.yaml');
    return base;
  }

  async whenIdle(): Promise<void> {
    while (this.jobs.size) await Promise.all([...this.jobs]);
  }

  // One tick, in the order of DESIGN.md: reap, kills, stalls, then finish/settle sessions, then dispatch.
  private async runTick(): Promise<void> {
    const { ctx } = this;
    const t0 = performance.now();
    if (this.reloadPending) await this.reload();
    await reapExited(ctx);
    await actOnKills(ctx);
    await detectStalls(ctx);
    await adoptRemoteDone(ctx);
    await settleSessions(ctx, (s) => this.startFinish(s));
    if (ctx.base && ctx.serverUrl) await dispatchReady(ctx, this.dstate);
    const ms = performance.now() - t0;
    if (ms > ctx.config.orchestrator.tick_ms) ctx.log.warn(`slow tick: ${Math.round(ms)} ms (tick_ms ${ctx.config.orchestrator.tick_ms})`);
  }

  // Gates and merges can take minutes: they run beside the ticks, which leave a busy session alone.
  private startFinish(s: Session): void {
    s.busy = true;
    const job: Promise<void> = finishSession(this.ctx, s)
      .catch((err) => this.ctx.log.error(`finishing session ${s.rec.session_id} failed`, err))
      .finally(() => {
        s.busy = false;
        this.jobs.delete(job);
        this.loop.request();
      });
    this.jobs.add(job);
  }

  private async detect(): Promise<void> {
    this.ctx.detected = await detectAdapters({ agents: this.ctx.config.agents, pathEnv: this.deps.env.PATH ?? '', cwd: this.deps.root });
    this.dstate.warned.clear();
  }

  // Probe bubblewrap for agents.sandbox; running without one is said loudly, every time it is decided.
  private async resolveSandbox(): Promise<void> {
    const { ctx } = this;
    ctx.sandbox = await resolveSandbox(ctx.config.agents.sandbox, this.deps.env.PATH ?? '');
    if (ctx.sandbox.mode === 'bwrap') ctx.log.info(`agents and gates run sandboxed: ${ctx.sandbox.reason}`);
    else if (ctx.sandbox.mode === 'unavailable') ctx.log.error(`NO AGENT WILL START: ${ctx.sandbox.reason}`);
    else ctx.log.warn(`AGENTS AND GATES RUN WITHOUT A SANDBOX (${ctx.sandbox.reason}): they can read .sdd/secrets, other worktrees and everything else this user can. Install bubblewrap to contain them.`);
  }

  private readConfigFile(): Config | null {
    if (!this.deps.reloadConfig) return null;
    try {
      return this.deps.reloadConfig();
    } catch (err) {
      this.ctx.log.warn(`config.yaml is invalid; keeping the running configuration: ${(err as Error).message}`);
      return null;
    }
  }

  private async reload(): Promise<void> {
    this.reloadPending = false;
    const next = this.readConfigFile();
    if (!next) return;
    const c = this.ctx.config;
    // trackers: the webhook receivers and pollers read it from this same object at each use.
    const sandboxChanged = next.agents.sandbox !== c.agents.sandbox;
    Object.assign(c, { gates: next.gates, agents: next.agents, janitor: next.janitor, trackers: next.trackers });
    if (sandboxChanged) await this.resolveSandbox();
    if (next.orchestrator.max_agents !== this.fileValues.max_agents) c.orchestrator.max_agents = next.orchestrator.max_agents;
    if (next.orchestrator.batch_size !== this.fileValues.batch_size) c.orchestrator.batch_size = next.orchestrator.batch_size;
    this.fileValues = { max_agents: next.orchestrator.max_agents, batch_size: next.orchestrator.batch_size };
    await this.detect();
    this.ctx.log.info(`config reloaded: max_agents ${c.orchestrator.max_agents}, batch_size ${c.orchestrator.batch_size}, ${c.gates.length} gate(s), adapters on PATH: ${this.ctx.detected.map((d) => d.name).join(', ') || 'none'}`);
  }

  // chokidar on the signals folder and config.yaml only (never tasks/); the task service's changes also ask for a tick.
  private watchFiles(): void {
    const { layout } = this.deps;
    mkdirSync(layout.signalsDir, { recursive: true });
    const watcher: FSWatcher = watch([layout.signalsDir, layout.config], { ignoreInitial: true, depth: 0, ignored: (p) => p.endsWith('.tmp') });
    watcher.on('all', (_ev, path) => {
      if (path === layout.config) this.reloadPending = true;
      this.loop.request();
    });
    watcher.on('error', (err) => this.ctx.log.warn(`watcher: ${(err as Error).message}`));
    this.closers.push(() => watcher.close());
    this.closers.push(this.deps.svc.onChange((t) => {
      // Open work, our sessions' tasks, and work a cluster node finished (its branch waits for gates and merge).
      if (t.status === 'open' || (t.claimed_by_session !== null && this.ctx.sessions.has(t.claimed_by_session)) || (t.status === 'done' && t.node_id !== null)) this.loop.request();
    }));
  }
}
