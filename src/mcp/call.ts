// Running a tool as the API would run its endpoint: the task scope's default, the access check of the
// operation it mirrors, validation, the call; values and errors become MCP tool results.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { accessDenied, roleAllows } from '../auth/index.ts';
import { forbidden } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Principal } from '../lib/route.ts';
import { compileValidator, errorResponse, ValidationFailed, type Validator } from '../server/index.ts';
import { TASK_SCHEMAS, type McpBoard } from './board.ts';
import type { ToolCall, ToolDef } from './tools.ts';

/** True when the principal may call at least one operation of the tool (tools/list shows only those). */
export function usable(tool: ToolDef, board: McpBoard, p: Principal): boolean {
  const ops = new Set([tool.operation({}), tool.operation({ task_id: p.taskId ?? '' })]);
  return [...ops].some((op) => {
    const { access, taskScope } = board.operation(op);
    return roleAllows(p.role, access) && (!p.taskId || taskScope !== undefined);
  });
}

/** The tool as tools/list shows it: JSON Schema of its input, the argument a scoped token may omit left optional. */
export function describeTool(tool: ToolDef): Tool {
  const schema = JSON.parse(JSON.stringify(tool.input)) as Tool['inputSchema'] & { required?: string[] };
  if (tool.own && schema.required) schema.required = schema.required.filter((k) => k !== tool.own);
  if (schema.required?.length === 0) delete schema.required;
  return {
    name: tool.name, title: tool.title, description: tool.description, inputSchema: schema,
    annotations: { title: tool.title, readOnlyHint: tool.readOnly === true, openWorldHint: false },
  };
}

const validators = new WeakMap<ToolDef, Validator>();
const validatorOf = (tool: ToolDef): Validator => {
  let v = validators.get(tool);
  if (!v) validators.set(tool, (v = compileValidator(tool.check ?? tool.input, TASK_SCHEMAS)));
  return v;
};

/** Call a tool with raw arguments; every refusal (403, 404, 409, 422…) is a tool error carrying the API's detail. */
export async function callTool(tool: ToolDef, raw: Record<string, unknown> | undefined, call: ToolCall, log: Logger): Promise<CallToolResult> {
  try {
    const { principal } = call.caller;
    const args = { ...raw };
    if (tool.own && args[tool.own] === undefined && principal.taskId) args[tool.own] = principal.taskId;
    const { access, taskScope } = call.board.operation(tool.operation(args));
    const denied = accessDenied(principal, access, args, taskScope);
    if (denied) throw denied;
    if (taskScope === 'parent' && principal.taskId && args.parent_task_id !== principal.taskId) {
      throw forbidden(`token is scoped to task '${principal.taskId}': subtasks go under its own task only`);
    }
    return resultOf(await tool.run(validatorOf(tool).parse(args, 'body'), call));
  } catch (err) {
    return errorResult(err, log, tool.name);
  }
}

/** A value as a tool result: JSON text for the model, the same value as structured content. */
export function resultOf(value: unknown): CallToolResult {
  const structured = value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : { result: value ?? null };
  return { content: [{ type: 'text', text: JSON.stringify(value ?? null) }], structuredContent: structured };
}

/** An error as a tool result: `status: detail` for the model, the API's error body (and status) as structured content. */
export function errorResult(err: unknown, log: Logger, where: string): CallToolResult {
  const out = errorResponse(err instanceof ValidationFailed ? new ValidationFailed(err.issues.map((i) => ({ ...i, loc: ['arguments', ...i.loc.slice(1)] }))) : err);
  if (out.internal) log.error(`MCP tool ${where} failed`, err);
  const body = (out.body ?? {}) as { detail?: unknown };
  return { isError: true, content: [{ type: 'text', text: `${out.status}: ${detailText(body.detail)}` }], structuredContent: { status: out.status, ...body } };
}

/** A `detail` as one line: a string as is, validation issues as `field: message` joined. */
export function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail.map((i: { loc?: unknown[]; msg?: unknown }) => `${(i.loc ?? []).slice(1).join('.') || 'arguments'}: ${String(i.msg)}`).join('; ');
  }
  return JSON.stringify(detail ?? null);
}
