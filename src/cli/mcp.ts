import { command } from './command.ts';
import { CliError } from './args.ts';
import { EXIT } from './client.ts';
import { CONN, endpoint } from './remote.ts';
// The bridge alone (not src/mcp/index.ts): `svc mcp` runs beside every agent and loads no server code.
import { bridgeStdio, describe } from '../mcp/stdio.ts';

const TENANT = { tenant: { type: 'string', valueHint: 'tenant', description: 'Act in this tenant (X-Tenant-ID; default: the token\'s own, else the default tenant)' } } as const;

/** `svc mcp`: the MCP server over stdio for agent CLIs, relayed to /mcp of the running svc with the caller's token. */
export const mcpCommand = command({ name: 'mcp', description: 'MCP server on stdio (for agent CLIs), relayed to the running svc' }, {
  ...CONN, ...TENANT,
  check: { type: 'boolean', description: 'Connect once, print the tools this token may use, and exit (4: refused, 5: unreachable)' },
}, async (c) => {
  const ep = endpoint(c);
  const tenant = c.values.tenant as string | undefined;
  if (c.values.check) return check(ep.url, ep.token, tenant, c.out, Boolean(c.values.json));
  await bridgeStdio({ url: ep.url, ...(ep.token ? { token: ep.token } : {}), ...(tenant ? { tenant } : {}), stdin: process.stdin, stdout: process.stdout, log: (l) => process.stderr.write(`${l}\n`) });
});

// One session with the SDK's own client: initialize, tools/list, end.
async function check(url: string, token: string | undefined, tenant: string | undefined, out: (t: string) => void, json: boolean): Promise<void> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(tenant ? { 'x-tenant-id': tenant } : {}) };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'svc-mcp-check', version: '1' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    out(json ? JSON.stringify({ server: client.getServerVersion(), tools: tools.map((t) => t.name) }, null, 2) : `${url}/mcp: ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);
    await transport.terminateSession().catch(() => undefined);
  } catch (err) {
    const why = describe(err, url);
    throw new CliError(why.message, why.status === 0 ? EXIT.unreachable : why.status === 401 || why.status === 403 ? EXIT.auth : EXIT.failed);
  } finally {
    await client.close();
  }
}
