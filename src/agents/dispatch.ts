import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createToken } from '../auth/index.ts';
import { hasCode } from '../lib/domain-error.ts';
import { TASK_REFUSALS, type GateReport, type Reservation, type Task } from '../tasks/index.ts';
import {
  addWorktree, adapterSettings, agentBranch, agentEnv, buildPrompt, chooseAdapter, envPolicy, exitFilePath, graveyardRef, planLaunch, promptPath,
  revParse, runTraceparent, sandboxWrapper, spawnAgent, takesMcp, type AdapterName, type PreviousAttempt,
} from '../runner/index.ts';
import { notify } from './observer.ts';
import { writeOwner } from './session-owner.ts';
import { newSessionId, removeSessionFiles, saveSession, type AgentContext, type Session, type SessionRecord } from './sessions.ts';

/** A ready queue: one (tenant, role) pair. */
export interface QueueKey {
  tenant: string;
  role: string;
}

/** The (tenant, role) queues of open tasks, rotated so the one after `last` comes first: every role gets its turn (pure). */
export function fairQueues(open: readonly Pick<Task, 'tenant' | 'role'>[], last: string | null): QueueKey[] {
  const keys = [...new Set(open.map((t) => `${t.tenant}\u0000${t.role}`))].sort();
  const next = last === null ? 0 : keys.findIndex((k) => k > last);
  const start = next < 0 ? 0 : next;
  return [...keys.slice(start), ...keys.slice(0, start)].map((k) => {
    const [tenant = '', role = ''] = k.split('\u0000');
    return { tenant, role };
  });
}

/** Sessions whose agent process is starting or running (what max_agents bounds). */
export function runningCount(sessions: Iterable<Session>): number {
  let n = 0;
  for (const s of sessions) if (s.rec.status === 'starting' || s.rec.status === 'running') n++;
  return n;
}

/** Dispatch state kept between ticks: the queue served last, and warnings already given. */
export interface DispatchState {
  cursor: string | null;
  warned: Set<string>;
}

/** Start agents for up to `batch_size` ready tasks while fewer than `max_agents` run; one task per queue per round. */
export async function dispatchReady(ctx: AgentContext, state: DispatchState): Promise<Session[]> {
  const { max_agents, batch_size } = ctx.config.orchestrator;
  let budget = Math.min(batch_size, max_agents - runningCount(ctx.sessions.values()));
  // No agent CLI at all, or no sandbox where one is required: nothing could start, so leave the queues alone (warned once).
  if (budget <= 0 || ctx.svc.draining || (ctx.detected.length === 0 && !warnNoAdapter(ctx, state)) || !sandboxUsable(ctx, state)) return [];
  const queues = fairQueues(ctx.svc.list({ status: 'open' }), state.cursor);
  const empty = new Set<number>();
  const skipped: Reservation[] = [];
  const started: Session[] = [];
  try {
    for (let i = 0; budget > 0 && empty.size < queues.length; i = (i + 1) % queues.length) {
      if (empty.has(i)) continue;
      const q = queues[i]!;
      const taken = ctx.svc.reserveNext(q.role, q.tenant);
      if (!taken) { empty.add(i); continue; }
      const adapter = pickAdapter(ctx, state, taken.task);
      if (!adapter) { skipped.push(taken); continue; }
      state.cursor = `${q.tenant}\u0000${q.role}`;
      const s = await startSession(ctx, taken.task, adapter);
      if (s) { started.push(s); budget--; } else skipped.push(taken);
    }
  } finally {
    for (const r of skipped) r.release();
  }
  return started;
}

function warnNoAdapter(ctx: AgentContext, state: DispatchState): false {
  const reason = 'no agent CLI found on PATH';
  if (ctx.svc.counts().open > 0 && !state.warned.has(reason)) {
    state.warned.add(reason);
    ctx.log.warn(`cannot dispatch tasks: ${reason} (set agents.default / agents.<name>.command in .sdd/config.yaml)`);
  }
  return false;
}

// `agents.sandbox: bwrap` that does not work: agents never start unsandboxed.
function sandboxUsable(ctx: AgentContext, state: DispatchState): boolean {
  if (ctx.sandbox.mode !== 'unavailable') return true;
  if (ctx.svc.counts().open > 0 && !state.warned.has(ctx.sandbox.reason)) {
    state.warned.add(ctx.sandbox.reason);
    ctx.log.error(`cannot dispatch tasks: ${ctx.sandbox.reason} (install bubblewrap, or set agents.sandbox to auto or none)`);
  }
  return false;
}

// The adapter for a task, or null (warned once per reason) when none can run it.
function pickAdapter(ctx: AgentContext, state: DispatchState, task: Task): AdapterName | null {
  const requested = typeof task.metadata.adapter === 'string' ? task.metadata.adapter : null;
  const choice = chooseAdapter({ requested, agents: ctx.config.agents, detected: ctx.detected });
  if (choice.ok) return choice.name;
  if (!state.warned.has(choice.reason)) {
    state.warned.add(choice.reason);
    ctx.log.warn(`cannot dispatch tasks: ${choice.reason} (set agents.default / agents.<name>.command in .sdd/config.yaml)`);
  }
  return null;
}

/** Claim `task` for a new session and start its agent; null when the claim was lost. A failed start releases the task. */
export async function startSession(ctx: AgentContext, task: Task, adapter: AdapterName): Promise<Session | null> {
  const sid = newSessionId(task.role, ctx.randomHex());
  const who = { actor: 'orchestrator', tenant: task.tenant };
  const rec: SessionRecord = {
    session_id: sid, role: task.role, adapter, model: null, status: 'starting', pid: null, task_id: task.id, task_title: task.title,
    tenant: task.tenant, worktree: ctx.layout.worktree(sid), branch: agentBranch(sid), started_at: ctx.clock.iso(), ended_at: null,
    exit_code: null, node_id: null, stalled: false, sandbox: ctx.sandbox.mode === 'bwrap' ? 'bwrap' : 'none', token_id: null, gates_passed: null, merge_deferred: null, trace_id: null,
  };
  // The record comes first: after a crash, a task claimed by this session is known to be ours.
  await saveSession(ctx, rec);
  let claimed: Task;
  try {
    // The branch on the claim: dependents of this task wait until its work is merged (closed), not just done.
    claimed = await ctx.svc.claim(task.id, { claimed_by_session: sid, expectedVersion: task.version, branch: agentBranch(sid) }, who);
  } catch (err) {
    await removeSessionFiles(ctx.layout, sid);
    // Lost to another claimer or blocked: the next round decides again. Anything else is worth a warning.
    if (hasCode(err, ...TASK_REFUSALS, 'draining')) ctx.log.debug(`dispatch of ${task.id} skipped: ${(err as Error).message}`);
    else ctx.log.warn(`dispatch of ${task.id} failed: ${(err as Error).message}`);
    return null;
  }
  const s: Session = { rec, child: null, exit: null, busy: false };
  ctx.sessions.set(sid, s);
  try {
    await launch(ctx, s, claimed);
  } catch (err) {
    await failedStart(ctx, s, err as Error);
  }
  return s;
}

async function launch(ctx: AgentContext, s: Session, task: Task): Promise<void> {
  const { rec } = s;
  const wt = await addWorktree(ctx, rec.session_id, ctx.base);
  const previous = await previousAttempt(ctx, task);
  // The svc MCP server, run by the shim the sandbox lets the agent run (agents.mcp); the token stays in the environment.
  const mcp = ctx.config.agents.mcp ? { svc: ctx.svcBinDir ? join(ctx.svcBinDir, 'svc') : 'svc', serverUrl: ctx.serverUrl } : undefined;
  const withMcp = !!mcp && takesMcp(rec.adapter as AdapterName, adapterSettings(ctx.config.agents, rec.adapter as AdapterName));
  const prompt = buildPrompt({ task, sessionId: rec.session_id, worktree: wt.path, branch: wt.branch, baseBranch: ctx.base, serverUrl: ctx.serverUrl, mcp: withMcp, ...(previous ? { previous } : {}) });
  const promptFile = promptPath(ctx.layout, rec.session_id);
  await mkdir(dirname(promptFile), { recursive: true, mode: 0o700 });
  await writeFile(promptFile, prompt, { mode: 0o600 });
  const plan = planLaunch({
    adapter: rec.adapter as AdapterName, agents: ctx.config.agents, taskModel: task.model,
    values: { prompt_file: promptFile, prompt, task_id: task.id, session_id: rec.session_id, worktree: wt.path }, ...(mcp ? { mcp } : {}),
  });
  rec.model = plan.model || null;
  const tok = await createToken(ctx.layout, { role: 'agent', taskId: task.id, tenant: task.tenant, label: `agent session ${rec.session_id}` }, ctx.clock);
  rec.token_id = tok.record.id;
  // The run's trace (the task's own when its creator gave one): TRACEPARENT for the agent, the id in the record.
  const trace = runTraceparent(task.metadata.traceparent, ctx.randomBytes(24));
  rec.trace_id = trace.traceId;
  await saveSession(ctx, rec);
  const logFile = ctx.layout.log(rec.session_id);
  await mkdir(dirname(logFile), { recursive: true });
  // The log keeps its tenant and task after the session record is gone (GET /agents/{sid}/logs checks it).
  await writeOwner(ctx.layout, { session_id: rec.session_id, task_id: task.id, tenant: task.tenant });
  const contained = rec.sandbox === 'bwrap' ? 'sandbox: bubblewrap' : `NO SANDBOX (${ctx.sandbox.reason})`;
  await appendFile(logFile, `[svc] ${ctx.clock.iso()} session ${rec.session_id}: ${plan.adapter} on task ${task.id} in ${wt.path} (${contained})\n`, { mode: 0o600 });
  const env = agentEnv({ base: ctx.env, serverUrl: ctx.serverUrl, taskId: task.id, sessionId: rec.session_id, token: tok.token, policy: envPolicy(ctx.config), svcBinDir: ctx.svcBinDir, traceparent: trace.traceparent });
  // The prompt and the svc shim live in the hidden .sdd/runtime: the agent may read (and run) just those.
  const wrap = await sandboxWrapper(ctx, wt.path, [promptFile, ...(ctx.svcBinDir ? [ctx.svcBinDir, ...(ctx.svcReadable ?? [])] : [])]);
  const proc = await spawnAgent({ argv: wrap(plan.argv), cwd: wt.path, env, logFile, exitFile: exitFilePath(ctx.layout, rec.session_id) });
  s.child = proc;
  void proc.exited.then((e) => { s.exit = e; });
  Object.assign(rec, { pid: proc.pid, status: 'running', started_at: ctx.clock.iso() });
  await saveSession(ctx, rec);
  notify(ctx.observer, ctx.log, 'started', { ...rec });
  await ctx.svc.apply(task.id, 'start', {}, { actor: 'orchestrator', tenant: task.tenant }, { heldBy: rec.session_id }).catch((err) => {
    // A quick agent may already have reported progress or completed (or the task went to another session).
    if (!hasCode(err, 'transition_refused', 'task_reassigned')) throw err;
  });
}

// A task the janitor reopened after failed gates: the failed gates of the last run and where its commits are kept.
async function previousAttempt(ctx: AgentContext, task: Task): Promise<PreviousAttempt | undefined> {
  if (!(Number(task.metadata.janitor_reopen_count) > 0)) return undefined;
  let report: GateReport;
  try {
    report = JSON.parse((await ctx.store.readText(ctx.layout.gates(task.id))) ?? '') as GateReport;
  } catch {
    return undefined;
  }
  const failedGates = report.results.filter((r) => r.required && r.status !== 'pass');
  if (report.overall_pass || failedGates.length === 0) return undefined;
  const ref = report.session_id ? graveyardRef(report.session_id) : undefined;
  const kept = ref && (await revParse(ctx.git, ref)) ? { workRef: ref } : {};
  return { attempt: task.claim_count, maxReopens: ctx.config.janitor.max_reopens, failedGates, ...kept };
}

// INTERFACE Errors rule 6: an agent that cannot start gives its task back; the next tick retires the session.
async function failedStart(ctx: AgentContext, s: Session, err: Error): Promise<void> {
  const { rec } = s;
  ctx.log.error(`could not start the agent of session ${rec.session_id} (task ${rec.task_id}): ${err.message}`);
  await appendFile(ctx.layout.log(rec.session_id), `[svc] could not start the agent: ${err.message}\n`).catch(() => undefined);
  if (rec.pid === null) Object.assign(rec, { status: 'exited', ended_at: ctx.clock.iso() });
  await saveSession(ctx, rec).catch(() => undefined);
  const task = ctx.svc.get(rec.task_id);
  if (task && task.claimed_by_session === rec.session_id && (task.status === 'claimed' || task.status === 'in_progress')) {
    // Only while this session still holds it: a release must never take the task from its next holder.
    await ctx.svc.apply(rec.task_id, 'release', { reason: `agent could not be started: ${err.message}` }, { actor: 'orchestrator', tenant: rec.tenant }, { heldBy: rec.session_id })
      .catch((e) => { if (!hasCode(e, 'task_reassigned', 'transition_refused')) ctx.log.error(`release of ${rec.task_id} failed`, e); });
  }
}
