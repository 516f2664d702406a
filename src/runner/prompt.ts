import { delimiter, join } from 'node:path';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import { allowedEnv, type EnvPolicy } from './env.ts';

/** What the prompt says about the run. */
export interface PromptInput {
  task: { id: string; title: string; description: string; role?: string };
  sessionId: string;
  worktree: string;
  branch: string;
  baseBranch: string;
  serverUrl: string;
  /** Set when an earlier attempt's gates failed (the janitor reopened the task). */
  previous?: PreviousAttempt;
  /** The agent's CLI was given the svc MCP server. */
  mcp?: boolean;
}

/** What the next attempt is told about the last one: its number, the failed gates and where its work is. */
export interface PreviousAttempt {
  /** Number of this attempt (1 = first). */
  attempt: number;
  maxReopens: number;
  failedGates: { name: string; command: string; status: string; exit_code: number | null; output_tail: string }[];
  /** Ref that keeps the previous attempt's commits, when there is one. */
  workRef?: string;
}

/** Bytes of gate output a re-run prompt carries in all (the tail of each failed gate shares it). */
export const GATE_CONTEXT_BYTES = 4096;

/** Where the prompt of a session is written (runtime, never inside the worktree, so it is never committed). */
export function promptPath(layout: SddLayout, sessionId: string): string {
  if (!isValidId(sessionId)) throw new Error(`invalid session id for a path: ${JSON.stringify(sessionId).slice(0, 80)}`);
  return join(layout.runtime, 'prompts', `${sessionId}.md`);
}

/** The instructions an agent receives: its task, its worktree and branch, and how to report (pure). */
export function buildPrompt(p: PromptInput): string {
  const t = p.task;
  return [
    `# Task ${t.id}: ${t.title}`,
    '',
    t.description.trim() || '(no description)',
    '',
    ...(p.previous ? previousSection(p.previous) : []),
    '## Where you work',
    '',
    `- Your git worktree: ${p.worktree} (your current directory). Work only inside it.`,
    `- Your branch: ${p.branch}, created from ${p.baseBranch}. Commit your work on this branch;`,
    '  do not push, do not switch branches, do not merge. Only committed work is merged.',
    `- After you complete, configured quality gates run in this worktree, then ${p.branch} is merged into ${p.baseBranch}.`,
    '',
    '## How to report',
    '',
    'Your environment holds SERVICE_SERVER_URL, SERVICE_TASK_ID, SERVICE_SESSION_ID and SERVICE_AUTH_TOKEN',
    `(a token for this task only). Use the CLI, or the HTTP API at ${p.serverUrl} with`,
    'the header `Authorization: Bearer $SERVICE_AUTH_TOKEN` and a JSON body:',
    '',
    `- progress: \`svc task progress ${t.id} --message "…"\` or POST /tasks/${t.id}/progress`,
    '  `{"message": "…", "percent": 40, "files_changed": 3, "tests_passing": 12, "errors": 0}`',
    `- complete: \`svc task complete ${t.id} --summary "…"\` or POST /tasks/${t.id}/complete`,
    '  `{"result_summary": "what you did", "payload": {"outcome": "completed", "files_changed": ["…"],',
    '  "commits": ["<sha>"], "tests": {"passed": 12, "failed": 0}, "notes": "…"}}` (payload optional).',
    '  To refuse the task: `"payload": {"outcome": "refused", "refusal": {"reason": "why"}}`.',
    `- fail: \`svc task fail ${t.id} --reason "…"\` or POST /tasks/${t.id}/fail \`{"reason": "…"}\``,
    ...(p.mcp ? ['- or the tools of the `svc` MCP server you were given: report_progress, complete_task (with the same payload),', '  fail_task, get_task, create_subtask; they act on this task when you leave task_id out.'] : []),
    '',
    'Report exactly once at the end (complete or fail). Exiting without reporting counts as a failure.',
    '',
  ].join('\n');
}

// The failed gates of the last attempt, their commands and output tails, so the agent does not repeat the mistake.
function previousSection(prev: PreviousAttempt): string[] {
  const per = Math.floor(GATE_CONTEXT_BYTES / Math.max(1, prev.failedGates.length));
  const lines = [
    `## Attempt ${prev.attempt}: the previous attempt failed its quality gates`,
    '',
    `The work of the previous attempt was not merged because required gates failed (the janitor reopens a task at most ${prev.maxReopens} time(s)).`,
    prev.workRef ? `Its commits are kept at \`${prev.workRef}\` (\`git log ${prev.workRef}\`, \`git cherry-pick\`).` : 'You start again from the base branch.',
    'Fix what the gates report below; they run again in your worktree after you complete.',
    '',
  ];
  for (const g of prev.failedGates) {
    lines.push(`### Gate \`${g.name}\`: ${g.status}${g.exit_code === null ? '' : ` (exit ${g.exit_code})`}`, '', `Command: \`${g.command}\``, '', 'Last output:', '', '```', tailBytes(g.output_tail, per).trimEnd(), '```', '');
  }
  return lines;
}

/** The last `max` bytes of `text`, from a line start when one is near (pure). */
export function tailBytes(text: string, max: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= max) return text;
  let cut = buf.subarray(buf.length - max).toString('utf8').replace(/^\uFFFD+/, '');
  const nl = cut.indexOf('\n');
  if (nl >= 0 && nl < 200) cut = cut.slice(nl + 1);
  return `[…]\n${cut}`;
}

/** PATH with `dir` first: agents run the same `svc` as the server that started them, installed globally or not. */
export function withSvcOnPath(path: string | undefined, dir: string | undefined): string | undefined {
  if (!dir) return path;
  return [dir, ...(path ?? '').split(delimiter).filter((p) => p && p !== dir)].join(delimiter);
}

/** The environment of an agent process: the allow-listed part of `base` (env.ts) plus its own SERVICE_* variables. */
export function agentEnv(input: {
  base: Readonly<Record<string, string | undefined>>;
  serverUrl: string;
  taskId: string;
  sessionId: string;
  token: string;
  /** Folder holding the running server's `svc` (put first on PATH). */
  svcBinDir?: string;
  /** Default: no passthrough beyond the base names, no extra secrets. */
  policy?: EnvPolicy;
  /** W3C `traceparent` of the run: an agent CLI that exports OpenTelemetry joins the run's trace. */
  traceparent?: string;
}): Record<string, string> {
  // Never the server's own admin token or other SERVICE_* values: only the task-scoped ones below.
  const env = allowedEnv(input.base, input.policy ?? { passthrough: [], secrets: [] });
  // The server's own trace context (if it was started inside one) is not the run's.
  delete env.TRACEPARENT;
  delete env.TRACESTATE;
  const path = withSvcOnPath(env.PATH, input.svcBinDir);
  if (path !== undefined) env.PATH = path;
  return {
    ...env,
    SERVICE_SERVER_URL: input.serverUrl,
    SERVICE_TASK_ID: input.taskId,
    SERVICE_SESSION_ID: input.sessionId,
    SERVICE_AUTH_TOKEN: input.token,
    ...(input.traceparent ? { TRACEPARENT: input.traceparent } : {}),
  };
}
