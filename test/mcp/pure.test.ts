// The MCP layer's decisions with plain values: who sees which tool, own-task defaults, errors, URIs, the prompt.
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, notFound } from '../../src/lib/http-error.ts';
import { createLogger } from '../../src/lib/log.ts';
import type { Principal, Route } from '../../src/lib/route.ts';
import type { Caller, McpBoard } from '../../src/mcp/board.ts';
import { callTool, describeTool, detailText, usable } from '../../src/mcp/call.ts';
import { getPrompt } from '../../src/mcp/prompt.ts';
import { parseUri, taskUri } from '../../src/mcp/resources.ts';
import { TOOLS } from '../../src/mcp/tools.ts';

const T = suite('mcp: pure decisions');
const log = createLogger({ level: -999 });

// The access of the API operations the tools mirror, as the route records declare it.
const OPS: Record<string, Pick<Route, 'access' | 'taskScope'>> = {
  claim_next_task: { access: 'task' }, get_task: { access: 'read', taskScope: 'own' }, list_tasks: { access: 'read' },
  search_tasks: { access: 'read' }, report_progress: { access: 'task', taskScope: 'own' }, complete_task: { access: 'task', taskScope: 'own' },
  task_fail: { access: 'task', taskScope: 'own' }, task_release: { access: 'task', taskScope: 'own' }, self_create_task: { access: 'task', taskScope: 'parent' },
  task_wait_for_subtasks: { access: 'task', taskScope: 'own' }, task_graph: { access: 'read' }, task_graph_neighbors: { access: 'read', taskScope: 'own' },
  count_tasks: { access: 'read' },
};
const seen: unknown[] = [];
const board = {
  operation: (op: string) => OPS[op]!,
  get: (id: string) => { seen.push(id); if (id === 'gone') throw notFound(`Task '${id}' not found`); return { id, status: 'claimed' }; },
  complete: async () => { throw new HttpError(409, 'Cannot complete'); },
} as unknown as McpBoard;
const who = (p: Partial<Principal>): Caller => ({ principal: { kind: 'token', role: 'agent', tenant: null, actor: 'tok', ...p }, who: { actor: 'tok', tenant: 'default' } });
const run = (name: string, args: Record<string, unknown>, c: Caller) => callTool(TOOLS.find((t) => t.name === name)!, args, { board, caller: c, signal: new AbortController().signal }, log);

T('a viewer sees the read tools, a task token the tools of its own task, an agent all', () => {
  const names = (p: Partial<Principal>) => TOOLS.filter((t) => usable(t, board, who(p).principal)).map((t) => t.name);
  assert.equal(names({ role: 'viewer' }), ['get_task', 'list_tasks', 'search_tasks', 'task_graph', 'board_status']);
  assert.equal(names({ taskId: 'mine' }), ['get_task', 'report_progress', 'complete_task', 'fail_task', 'release_task', 'create_subtask', 'wait_for_subtasks', 'task_graph']);
  assert.is(names({}).length, 12);
});

T('a task token may leave task_id out; another task is 403 before any validation; API errors keep status and detail', async () => {
  seen.length = 0;
  const own = await run('get_task', {}, who({ taskId: 'mine' }));
  assert.equal([own.isError, seen], [undefined, ['mine']]);
  const other = await run('get_task', { task_id: 'theirs', junk: { deep: true } }, who({ taskId: 'mine' }));
  assert.equal([other.isError, other.structuredContent], [true, { status: 403, detail: "token is scoped to task 'mine': task 'theirs' is not its task" }]);
  const missing = await run('get_task', {}, who({}));
  assert.equal((missing.content[0] as { text: string }).text, '422: task_id: Expected required property');
  assert.equal((await run('get_task', { task_id: 'gone' }, who({}))).structuredContent, { status: 404, detail: "Task 'gone' not found" });
  assert.equal((await run('complete_task', { task_id: 'x', result_summary: 's' }, who({}))).content, [{ type: 'text', text: '409: Cannot complete' }]);
  const viewer = await run('complete_task', { task_id: 'x', result_summary: 's' }, who({ role: 'viewer' }));
  assert.equal(viewer.structuredContent, { status: 403, detail: 'viewer role cannot access this endpoint' });
});

T('tools/list leaves the own-task argument optional and keeps the API\'s limits', () => {
  const complete = describeTool(TOOLS.find((t) => t.name === 'complete_task')!);
  assert.equal(complete.inputSchema.required, ['result_summary']);
  assert.not.ok(JSON.stringify(complete).includes('$id'), 'no TypeBox ids');
  assert.equal(describeTool(TOOLS.find((t) => t.name === 'board_status')!).inputSchema, { type: 'object', properties: {} });
});

T('details read as one line; task URIs round-trip; the prompt checks its arguments', () => {
  assert.is(detailText([{ loc: ['arguments', 'payload', 'outcome'], msg: 'bad' }, { loc: ['arguments'], msg: 'worse' }]), 'payload.outcome: bad; arguments: worse');
  assert.is(detailText('plain'), 'plain');
  assert.equal([parseUri(taskUri('01abc')), parseUri(taskUri('01abc', true)), parseUri('svc://task/'), parseUri('http://x/task/1')], [{ id: '01abc', gates: false }, { id: '01abc', gates: true }, null, null]);
  assert.match((getPrompt('work_next_task', { role: 'qa', wait_s: '0' }).messages[0]!.content as { text: string }).text, 'role "qa" and wait_s 0');
  for (const [name, args] of [['other', { role: 'qa' }], ['work_next_task', {}], ['work_next_task', { role: 'qa', wait_s: '61' }]] as const) {
    assert.throws(() => getPrompt(name, args as Record<string, string>), (e: unknown) => e instanceof McpError);
  }
});

T.run();
