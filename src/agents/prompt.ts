import { join } from 'node:path';
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
}

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
    '',
    'Report exactly once at the end (complete or fail). Exiting without reporting counts as a failure.',
    '',
  ].join('\n');
}

/** The environment of an agent process: the allow-listed part of `base` (env.ts) plus its own SERVICE_* variables. */
export function agentEnv(input: {
  base: Readonly<Record<string, string | undefined>>;
  serverUrl: string;
  taskId: string;
  sessionId: string;
  token: string;
  /** Default: no passthrough beyond the base names, no extra secrets. */
  policy?: EnvPolicy;
}): Record<string, string> {
  // Never the server's own admin token or other SERVICE_* values: only the task-scoped ones below.
  const env = allowedEnv(input.base, input.policy ?? { passthrough: [], secrets: [] });
  return {
    ...env,
    SERVICE_SERVER_URL: input.serverUrl,
    SERVICE_TASK_ID: input.taskId,
    SERVICE_SESSION_ID: input.sessionId,
    SERVICE_AUTH_TOKEN: input.token,
  };
}
