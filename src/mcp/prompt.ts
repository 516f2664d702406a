// The prompt template "work the next task of role X": how an agent works the board with the tools.
import { ErrorCode, McpError, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js';

const ROLE = /^[a-z][a-z0-9_-]{0,63}$/;

/** The prompts of the server. */
export const PROMPTS: Prompt[] = [{
  name: 'work_next_task',
  title: 'Work the next task of a role',
  description: 'Claim the next open task of a role, do it, report progress, and complete or fail it.',
  arguments: [
    { name: 'role', description: 'Role of the tasks to work on, e.g. backend', required: true },
    { name: 'wait_s', description: 'Seconds to wait for a task when none is open (0-60, default 30)', required: false },
  ],
}];

/** The messages of a prompt for its arguments (pure); unknown prompts and bad arguments are InvalidParams. */
export function getPrompt(name: string, args: Record<string, string> = {}): GetPromptResult {
  if (name !== 'work_next_task') throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name.slice(0, 100)}`);
  const role = (args.role ?? '').trim();
  if (!ROLE.test(role)) throw new McpError(ErrorCode.InvalidParams, 'role: a role name is required (lowercase letters, digits, - and _)');
  const wait = args.wait_s === undefined || args.wait_s === '' ? 30 : Number(args.wait_s);
  if (!Number.isFinite(wait) || wait < 0 || wait > 60) throw new McpError(ErrorCode.InvalidParams, 'wait_s: a number of seconds from 0 to 60');
  return { description: `Work the next ${role} task`, messages: [{ role: 'user', content: { type: 'text', text: instructions(role, wait) } }] };
}

function instructions(role: string, wait: number): string {
  return [
    `Work the next open task of the role "${role}" on the svc board, using the svc tools.`,
    '',
    `1. Call next_task with role "${role}" and wait_s ${wait}. If it answers 404, there is no open task: say so and stop.`,
    '2. Read the task it returns: title, description, depends_on and owned_files. Work only on what it asks.',
    '3. Do the work in this repository. Commit it on your current branch; do not push, switch branches or merge.',
    '4. Call report_progress with the task_id now and then: a short message, a percent, and the counters',
    '   files_changed, tests_passing and errors, so people see how it goes and stalls are noticed.',
    '5. If the task is too big, split it: create_subtask for each part, then wait_for_subtasks.',
    '6. When done, call complete_task with a result_summary for people and a payload:',
    '   {"outcome": "completed", "files_changed": [...], "commits": [...], "tests": {"passed": N, "failed": N}, "notes": "..."}.',
    '   If you should not do the task, complete it with {"outcome": "refused", "refusal": {"reason": "why"}}.',
    '   If you cannot finish it, call fail_task with the reason; release_task hands it back untouched.',
    '',
    'Report exactly once at the end (complete_task or fail_task). A tool error says why in its text; fix the call and try again.',
  ].join('\n');
}
