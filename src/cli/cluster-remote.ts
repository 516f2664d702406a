// `svc cluster status` and `svc cluster nodes`: HTTP clients of a task server's /cluster routes.
import type { ClusterNode, ClusterStatus } from '../cluster/index.ts';
import { CliError, UsageError } from './args.ts';
import { call, EXIT, resolveEndpoint, type Endpoint } from './client.ts';
import { command, type RunContext } from './command.ts';
import { nodesTable, statusText } from './cluster-view.ts';

const ARGS = {
  'server-url': { type: 'string', valueHint: 'url', description: 'Task server (default: SERVICE_SERVER_URL, else the svc running in this repository)' },
  token: { type: 'string', valueHint: 'token', description: "Bearer token (default: SERVICE_AUTH_TOKEN, else this repository's .sdd/secrets/admin.token)" },
  'json-output': { type: 'boolean', description: 'Print the server\'s JSON' },
} as const;

function endpointOf(c: RunContext): Endpoint {
  return resolveEndpoint(c.env, String(c.values.workdir ?? process.cwd()), { server: c.values['server-url'] as string | undefined, token: c.values.token as string | undefined });
}

// One GET; a server that cannot be reached is named in the words of the original CLI (exit 5).
async function get<T>(ep: Endpoint, path: string): Promise<T> {
  try {
    return await call<T>(ep, 'GET', path);
  } catch (err) {
    if (err instanceof CliError && err.exitCode === EXIT.unreachable) throw new CliError(`Cannot connect to task server at ${ep.url}`, EXIT.unreachable);
    throw err;
  }
}

const json = (c: RunContext) => Boolean(c.values['json-output'] || c.values.json);

export const clusterStatusCommand = command({ name: 'cluster status', description: 'The cluster: node counts, capacity, every node with its heartbeat age, the tasks nodes hold' }, ARGS, async (c) => {
  const s = await get<ClusterStatus>(endpointOf(c), '/cluster/status');
  c.out(json(c) ? JSON.stringify(s, null, 2) : statusText(s, Date.now()));
});

const STATUSES = ['online', 'cordoned', 'draining', 'offline'];

export const clusterNodesCommand = command({ name: 'cluster nodes', description: 'Registered nodes (heartbeat ages: never, 42s, 3m 10s, 2h 5m)' }, {
  ...ARGS,
  status: { type: 'string', valueHint: 'status', description: 'Only nodes in this status: online, cordoned, draining or offline' },
}, async (c) => {
  const status = c.values.status === undefined ? undefined : String(c.values.status).toLowerCase();
  if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  const nodes = await get<ClusterNode[]>(endpointOf(c), `/cluster/nodes${status ? `?status=${status}` : ''}`);
  c.out(json(c) ? JSON.stringify(nodes, null, 2) : nodesTable(nodes, Date.now()));
});
