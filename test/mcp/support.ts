// MCP test helpers: the SDK's own client against /mcp of a real server, and tool calls read as text and value.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningServer } from '../helpers/server.ts';

/** A connected client and how to end its session. */
export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/** An SDK client with a session on `${url}/mcp`, sending `token` (none: no Authorization header). */
export async function connect(s: Pick<RunningServer, 'url'>, token?: string, headers: Record<string, string> = {}): Promise<Connected> {
  const client = new Client({ name: 'svc-test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } },
  });
  await client.connect(transport);
  return { client, transport, close: async () => { await transport.terminateSession().catch(() => undefined); await client.close(); } };
}

/** One tool result: error or not, its text, and its structured value. */
export interface Called {
  ok: boolean;
  text: string;
  value: any;
}

/** Call a tool and read its result. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Called> {
  const r = await client.callTool({ name, arguments: args });
  const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');
  return { ok: !r.isError, text, value: r.structuredContent };
}

/** The tools a client sees, by name. */
export const toolNames = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);

export const ALL_TOOLS = ['next_task', 'get_task', 'list_tasks', 'search_tasks', 'report_progress', 'complete_task', 'fail_task', 'release_task', 'create_subtask', 'wait_for_subtasks', 'task_graph', 'board_status'];
