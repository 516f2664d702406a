// One MCP server per session, built with the SDK's low-level Server: the tools' JSON Schemas come from the
// API's TypeBox shapes (McpServer wants zod) and refusals carry the API's detail. The caller of each
// request is the one its HTTP request authenticated (auth info), so a session never outlives a token.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../lib/log.ts';
import type { Caller, McpBoard } from './board.ts';
import { callTool, describeTool, usable } from './call.ts';
import { getPrompt, PROMPTS } from './prompt.ts';
import { checkResource, listResources, readResource, taskUri, TEMPLATES } from './resources.ts';
import { TOOLS } from './tools.ts';

export interface ProtocolDeps {
  board: McpBoard;
  version: string;
  log: Logger;
}

/** What a request handler gets from the SDK that names the caller. */
interface Extra { authInfo?: { extra?: Record<string, unknown> } }

/** The caller a transport attached to a request's auth info. */
export const callerOf = (extra: Extra): Caller => {
  const caller = extra.authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new McpError(ErrorCode.InvalidRequest, 'request without an authenticated caller');
  return caller;
};

/** Aborted when the client cancels the call or its HTTP request goes away. */
const signalOf = (extra: Extra & { signal: AbortSignal }): AbortSignal => {
  const gone = extra.authInfo?.extra?.gone as AbortSignal | undefined;
  return gone ? AbortSignal.any([extra.signal, gone]) : extra.signal;
};

const INSTRUCTIONS = 'svc is the task board of this repository. Claim work with next_task (or work the task your token is scoped to), '
  + 'report_progress while you work, and finish with complete_task (result_summary, optional structured payload) or fail_task. '
  + 'Errors are tool results whose text is the API\'s "status: detail".';

/** A server for one session, and how to let go of it (its board listener). */
export function createMcpServer(deps: ProtocolDeps): { server: Server; dispose(): void } {
  const { board, log } = deps;
  const server = new Server({ name: 'svc', title: 'svc task board', version: deps.version }, {
    capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
    instructions: INSTRUCTIONS,
  });
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => {
    const { principal } = callerOf(extra);
    return { tools: TOOLS.filter((t) => usable(t, board, principal)).map(describeTool) };
  });
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const tool = TOOLS.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name.slice(0, 100)}`);
    return callTool(tool, req.params.arguments, { board, caller: callerOf(extra), signal: signalOf(extra) }, log);
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (_req, extra) => ({ resources: await listResources(board, callerOf(extra)) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) => readResource(board, callerOf(extra), req.params.uri));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(req.params.name, req.params.arguments));
  // Subscriptions: notifications/resources/updated on the session's GET stream when the task changes.
  const subscribed = new Set<string>();
  server.setRequestHandler(SubscribeRequestSchema, (req, extra) => {
    checkResource(board, callerOf(extra), req.params.uri);
    subscribed.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (req) => { subscribed.delete(req.params.uri); return {}; });
  const off = board.onChange((t) => {
    for (const uri of [taskUri(t.id), taskUri(t.id, true)]) {
      if (subscribed.has(uri)) server.sendResourceUpdated({ uri }).catch((err: Error) => log.debug(`MCP resource update not sent: ${err.message}`));
    }
  });
  return { server, dispose: off };
}
