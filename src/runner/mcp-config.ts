// How each agent CLI is given the svc MCP server for one run (pure): the token never appears in argv or
// a file, each CLI finds it in the agent's environment (SERVICE_AUTH_TOKEN, scoped to the task).

/** Where the run's MCP server is: the `svc` that runs `svc mcp` (the server's shim), and the server's URL. */
export interface AgentMcp {
  svc: string;
  serverUrl: string;
}

/**
 * Claude Code's `--mcp-config` JSON (also the `{mcp_config}` placeholder): `svc mcp` over stdio, which
 * inherits the agent's environment and so talks to this server with the task's token.
 */
export function mcpConfigJson(m: AgentMcp): string {
  return JSON.stringify({ mcpServers: { svc: { type: 'stdio', command: m.svc, args: ['mcp'] } } });
}

/**
 * Codex's `-c` overrides: /mcp over streamable HTTP with the bearer token read from SERVICE_AUTH_TOKEN
 * (a stdio server started by Codex would get only Codex's fixed set of variables, not the token).
 */
export function codexMcpArgs(m: AgentMcp): string[] {
  const url = `${m.serverUrl.replace(/\/+$/, '')}/mcp`;
  return ['-c', `mcp_servers.svc.url=${JSON.stringify(url)}`, '-c', 'mcp_servers.svc.bearer_token_env_var="SERVICE_AUTH_TOKEN"'];
}
