import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { Type, type Static } from '../lib/typebox.ts';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Git } from '../store/git-cli.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import type { RecordStore } from '../store/types.ts';
import type { Task, Tasks } from '../tasks/index.ts';
import { type DetectedAdapter, exitFilePath, type AgentExit, type AgentProcess, promptPath, type SandboxState } from '../runner/index.ts';
import type { AgentObserver } from './observer.ts';

/** Lifecycle of an agent process as `GET /agents` reports it. */
export const SESSION_STATUSES = ['starting', 'running', 'exited', 'killed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

/** One entry of `GET /agents` (DECISIONS.md Agents); synthetic entries come from claimed or in-progress tasks. */
export const AgentEntry = Type.Object({
  session_id: Type.String(), role: Type.String(), adapter: Nullable(Type.String()), model: Nullable(Type.String()),
  status: Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s))), pid: NullableInt,
  task_id: Type.String(), task_title: Type.String(), tenant: Type.String(),
  worktree: Nullable(Type.String()), branch: Nullable(Type.String()),
  started_at: Nullable(Type.String()), ended_at: Nullable(Type.String()), exit_code: NullableInt,
  node_id: Nullable(Type.String()), stalled: Type.Boolean(), synthetic: Type.Optional(Type.Boolean()),
  sandbox: Type.Optional(Type.Union([Type.Literal('bwrap'), Type.Literal('none')], { description: 'How the agent was contained (agents.sandbox)' })),
  /** W3C trace id of the run (the agent got it in TRACEPARENT); absent on synthetic entries. */
  trace_id: Type.Optional(Nullable(Type.String())),
}, { $id: 'AgentEntry' });
export type AgentEntry = Static<typeof AgentEntry>;

/** `.sdd/runtime/agents/<sid>.json`: the entry plus what the orchestrator needs across restarts. */
export interface SessionRecord extends Omit<AgentEntry, 'synthetic' | 'worktree' | 'branch' | 'started_at' | 'sandbox' | 'trace_id'> {
  /** Whether the agent and its gates run in bubblewrap; 'none' means they could reach everything its user can. */
  sandbox: 'bwrap' | 'none';
  /** W3C trace id of the run, handed to the agent as TRACEPARENT (null for records written before traces). */
  trace_id: string | null;
  worktree: string;
  branch: string;
  started_at: string;
  /** Id of the task-scoped token handed to the agent (revoked when the session ends). */
  token_id: string | null;
  /** null until gates ran for the task's completion; true once they passed. */
  gates_passed: boolean | null;
  /** Why the merge into the base waits (dirty checkout, …); null when not waiting. */
  merge_deferred: string | null;
  /** Who asked for the kill (POST /agents/{sid}/kill); set with status `killed`. */
  killed_by?: string | null;
}

/** A session in memory: its record, our child process (null when adopted after a restart) and how it ended. */
export interface Session {
  rec: SessionRecord;
  child: AgentProcess | null;
  exit: AgentExit | null;
  /** A finishing job (gates, merge) runs for it: ticks leave it alone. */
  busy: boolean;
}

/** The server's parts the orchestrator works with. */
export interface AgentDeps {
  root: string;
  layout: SddLayout;
  git: Git;
  store: RecordStore;
  svc: Tasks;
  clock: Clock;
  log: Logger;
  /** Shared with the rest of the server; reloads update it in place. */
  config: Config;
  /** Base environment of agents and gates (SERVICE_AUTH_TOKEN is never passed on). */
  env: Readonly<Record<string, string | undefined>>;
  /** Folder with an `svc` that runs this server's own CLI; put first on every agent's PATH. */
  svcBinDir?: string;
  /** Folders that `svc` needs to run (its package, node): readable inside the sandbox, even under /tmp. */
  svcReadable?: readonly string[];
  /** Told about agent starts, run ends, gates and merges (metrics, the board's change feed). */
  observer?: AgentObserver;
}

/** Everything the orchestrator's parts share: deps, current config, base branch and live sessions. */
export interface AgentContext extends AgentDeps {
  base: string;
  /** How agents and gates are contained (resolved at start and on config reload). */
  sandbox: SandboxState;
  serverUrl: string;
  sessions: Map<string, Session>;
  detected: DetectedAdapter[];
  randomHex: () => string;
  /** Random bytes (trace and span ids of runs). */
  randomBytes: (n: number) => Uint8Array;
}

/** 8 random hex characters (the default source of session ids). */
export const randomHex8 = (): string => randomBytes(4).toString('hex');

/** `<role>-<8 hex>`, cut so it stays a valid id of at most 64 characters (pure). */
export function newSessionId(role: string, hex: string): string {
  const safe = role.toLowerCase().replace(/[^0-9a-z_-]/g, '-').replace(/^[^0-9a-z]+/, '').slice(0, 55) || 'agent';
  return `${safe}-${hex}`;
}

/** The record with keys in one stable order (so the file diffs well). */
export function orderedRecord(r: SessionRecord): SessionRecord {
  return {
    session_id: r.session_id, role: r.role, adapter: r.adapter, model: r.model, status: r.status, pid: r.pid,
    task_id: r.task_id, task_title: r.task_title, tenant: r.tenant, worktree: r.worktree, branch: r.branch,
    started_at: r.started_at, ended_at: r.ended_at, exit_code: r.exit_code, node_id: r.node_id, stalled: r.stalled,
    sandbox: r.sandbox, token_id: r.token_id, gates_passed: r.gates_passed, merge_deferred: r.merge_deferred, trace_id: r.trace_id,
  };
}

/** Write the session's record atomically. */
export function saveSession(ctx: Pick<AgentContext, 'store' | 'layout'>, rec: SessionRecord): Promise<void> {
  return ctx.store.writeJson(ctx.layout.agent(rec.session_id), orderedRecord(rec));
}

/** Every session record on disk (bad or foreign files are skipped). */
export async function loadSessionRecords(ctx: Pick<AgentContext, 'store' | 'layout' | 'log'>): Promise<SessionRecord[]> {
  const names = await readdir(ctx.layout.agentsDir).catch(() => [] as string[]);
  const out: SessionRecord[] = [];
  for (const n of names) {
    const sid = n.endsWith('.json') ? n.slice(0, -5) : '';
    if (!isValidId(sid)) continue;
    const rec = await ctx.store.readJson<SessionRecord>(ctx.layout.agent(sid)).catch(() => undefined);
    if (rec && rec.session_id === sid && typeof rec.task_id === 'string') out.push({ ...emptyExtras(), ...rec });
    else ctx.log.warn(`ignoring unreadable session record ${n}`);
  }
  return out;
}

function emptyExtras(): Pick<SessionRecord, 'stalled' | 'token_id' | 'gates_passed' | 'merge_deferred' | 'sandbox' | 'trace_id'> {
  return { stalled: false, token_id: null, gates_passed: null, merge_deferred: null, sandbox: 'none', trace_id: null };
}

/** Remove a retired session's runtime files (record, exit code, prompt); its log stays readable. */
export async function removeSessionFiles(layout: SddLayout, sid: string): Promise<void> {
  for (const f of [layout.agent(sid), exitFilePath(layout, sid), promptPath(layout, sid)]) await rm(f, { force: true });
}

/** The public entry of a live session (pure). */
export function toAgentEntry(r: SessionRecord): AgentEntry {
  const { token_id: _t, gates_passed: _g, merge_deferred: _m, ...entry } = orderedRecord(r);
  return entry;
}

/** One synthetic entry per claimed or in-progress task, for when no session is live (pure). */
export function syntheticEntries(tasks: readonly Task[]): AgentEntry[] {
  return tasks.filter((t) => t.status === 'claimed' || t.status === 'in_progress').map((t) => ({
    session_id: t.claimed_by_session ?? `task-${t.id}`, role: t.role, adapter: null, model: t.model,
    status: t.status === 'in_progress' ? 'running' : 'starting', pid: null, task_id: t.id, task_title: t.title, tenant: t.tenant,
    worktree: null, branch: t.claimed_by_session && isValidId(t.claimed_by_session) ? `agent/${t.claimed_by_session}` : null,
    started_at: t.claimed_at, ended_at: null, exit_code: null, node_id: t.node_id, stalled: false, synthetic: true,
  }));
}
