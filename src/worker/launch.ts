// Start the agent of a claimed task on this worker with the runner the local orchestrator uses: worktree
// on agent/<sid> from the server's base, prompt, adapter argv, allow-listed environment, sandbox, process
// group, log and exit file. The agent reports to the worker's relay, never to the server.
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import {
  addWorktree, agentEnv, buildPrompt, chooseAdapter, envPolicy, exitFilePath, planLaunch, promptPath, runTraceparent, sandboxWrapper, spawnAgent,
  type AgentProcess, type DetectedAdapter, type SandboxState,
} from '../runner/index.ts';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { BASE_BRANCH } from './remote-git.ts';
import type { WorkerSession } from './sessions.ts';

/** What a launch needs from the worker. */
export interface LaunchDeps {
  git: Git;
  layout: SddLayout;
  config: Config;
  clock: Clock;
  env: Readonly<Record<string, string | undefined>>;
  sandbox: SandboxState;
  detected: DetectedAdapter[];
  /** --adapter, else the task's `metadata.adapter`, else detection. */
  adapter: string | null;
  /** --model for tasks that name none. */
  model: string | null;
  relayUrl: string;
  svcBinDir?: string;
  svcReadable?: readonly string[];
  randomBytes: (n: number) => Uint8Array;
}

/** The task fields a launch reads. */
export interface ClaimedTask {
  id: string;
  title: string;
  description: string;
  role: string;
  model: string | null;
  metadata: Record<string, unknown>;
}

/** A task as the server answers a claim: what a launch reads and what the session record keeps. */
export type ServerTask = ClaimedTask & {
  tenant: string; claim_count: number; max_retries: number; status?: string; claimed_by_session?: string | null; node_id?: string | null;
};

/** Start the agent of `s` for `task`; throws when it cannot start (the caller releases the task). */
export async function launchAgent(d: LaunchDeps, s: WorkerSession, task: ClaimedTask): Promise<AgentProcess> {
  const requested = d.adapter ?? (typeof task.metadata.adapter === 'string' ? task.metadata.adapter : null);
  const choice = chooseAdapter({ requested, agents: d.config.agents, detected: d.detected });
  if (!choice.ok) throw new Error(choice.reason);
  if (d.sandbox.mode === 'unavailable') throw new Error(`no sandbox: ${d.sandbox.reason}`);
  const wt = await addWorktree(d, s.session_id, BASE_BRANCH);
  const prompt = buildPrompt({ task, sessionId: s.session_id, worktree: wt.path, branch: wt.branch, baseBranch: 'the server\'s base branch', serverUrl: d.relayUrl });
  const promptFile = promptPath(d.layout, s.session_id);
  await mkdir(dirname(promptFile), { recursive: true, mode: 0o700 });
  await writeFile(promptFile, prompt, { mode: 0o600 });
  const plan = planLaunch({
    adapter: choice.name, agents: d.config.agents, taskModel: task.model ?? d.model,
    values: { prompt_file: promptFile, prompt, task_id: task.id, session_id: s.session_id, worktree: wt.path },
  });
  const trace = runTraceparent(task.metadata.traceparent, d.randomBytes(24));
  const logFile = d.layout.log(s.session_id);
  await mkdir(dirname(logFile), { recursive: true });
  const contained = d.sandbox.mode === 'bwrap' ? 'sandbox: bubblewrap' : `NO SANDBOX (${d.sandbox.reason})`;
  await appendFile(logFile, `[svc] ${d.clock.iso()} session ${s.session_id}: ${plan.adapter} on task ${task.id} in ${wt.path} (${contained}; worker)\n`, { mode: 0o600 });
  const env = agentEnv({ base: d.env, serverUrl: d.relayUrl, taskId: task.id, sessionId: s.session_id, token: s.relay_token, policy: envPolicy(d.config), svcBinDir: d.svcBinDir, traceparent: trace.traceparent });
  const wrap = await sandboxWrapper(d, wt.path, [promptFile, ...(d.svcBinDir ? [d.svcBinDir, ...(d.svcReadable ?? [])] : [])]);
  return spawnAgent({ argv: wrap(plan.argv), cwd: wt.path, env, logFile, exitFile: exitFilePath(d.layout, s.session_id) });
}
