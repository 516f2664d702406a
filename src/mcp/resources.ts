// MCP resources: a task (`svc://task/<id>`) and its gate report (`svc://task/<id>/gates`), read with the
// access of GET /tasks/{id} and GET /tasks/{id}/gates; a token scoped to one task lists its own.
import { ErrorCode, McpError, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { accessDenied } from '../auth/index.ts';
import { errorResponse } from '../server/index.ts';
import type { Caller, McpBoard, Task } from './board.ts';
import { detailText } from './call.ts';

const URI = /^svc:\/\/task\/([^/?#]+)(\/gates)?$/;
// MCP's code for an unknown resource (spec: resources, error handling).
const RESOURCE_NOT_FOUND = -32002;

/** The URI of a task, or of its gate report. */
export const taskUri = (id: string, gates = false): string => `svc://task/${encodeURIComponent(id)}${gates ? '/gates' : ''}`;

/** The task id and kind a resource URI names, or null when it names none. */
export function parseUri(uri: string): { id: string; gates: boolean } | null {
  const m = URI.exec(uri);
  if (!m) return null;
  try {
    return { id: decodeURIComponent(m[1]!), gates: m[2] !== undefined };
  } catch {
    return null;
  }
}

/** The two resource templates. */
export const TEMPLATES: ResourceTemplate[] = [
  { uriTemplate: 'svc://task/{task_id}', name: 'task', title: 'A task', description: 'One task with every field (GET /tasks/{id})', mimeType: 'application/json' },
  { uriTemplate: 'svc://task/{task_id}/gates', name: 'gate-report', title: 'Gate report of a task', description: 'Quality-gate results of the task\'s latest run (GET /tasks/{id}/gates)', mimeType: 'application/json' },
];

/** The resources a caller is pointed at: its own task and, once gates ran, their report. */
export async function listResources(board: McpBoard, c: Caller): Promise<Resource[]> {
  const own = c.principal.taskId;
  if (!own) return [];
  let task: Task;
  try {
    task = board.get(own, c);
  } catch {
    return [];
  }
  const out: Resource[] = [{ uri: taskUri(own), name: `task ${own}`, title: task.title, description: 'The task you work on', mimeType: 'application/json' }];
  const report = await board.gates(own, c).then(() => true, () => false);
  if (report) out.push({ uri: taskUri(own, true), name: `gates ${own}`, title: `Gate report: ${task.title}`, mimeType: 'application/json' });
  return out;
}

/** Refuse as the API would (403 another task, 404 unknown or another tenant's), else name the resource and its task. */
export function checkResource(board: McpBoard, c: Caller, uri: string): { id: string; gates: boolean; task: Task } {
  const target = parseUri(uri);
  if (!target) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri });
  const { access, taskScope } = board.operation(target.gates ? 'get_gate_report' : 'get_task');
  try {
    const denied = accessDenied(c.principal, access, { task_id: target.id }, taskScope);
    if (denied) throw denied;
    return { ...target, task: board.get(target.id, c) };
  } catch (err) {
    throw asMcpError(err, uri);
  }
}

/** The resource's JSON. */
export async function readResource(board: McpBoard, c: Caller, uri: string): Promise<ReadResourceResult> {
  const target = checkResource(board, c, uri);
  try {
    const value = target.gates ? await board.gates(target.id, c) : target.task;
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
  } catch (err) {
    throw asMcpError(err, uri);
  }
}

// An API refusal as a JSON-RPC error: 404 is MCP's "resource not found", the rest carry status and detail.
function asMcpError(err: unknown, uri: string): McpError {
  const out = errorResponse(err);
  const detail = detailText((out.body as { detail?: unknown } | undefined)?.detail);
  const code = out.status === 404 ? RESOURCE_NOT_FOUND : out.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
  return new McpError(code, `${out.status}: ${detail}`, { uri, status: out.status, detail });
}
