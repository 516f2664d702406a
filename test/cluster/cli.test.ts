// `svc cluster status|nodes|token` against a real server, and how heartbeat ages print.
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { heartbeatAge } from '../../src/cli/cluster-view.ts';
import { boot, type Api } from '../api/support.ts';
import { svcOut } from '../compliance/tree.ts';
import { runCli } from '../helpers/server.ts';
import { SECRET, call } from './support.ts';

test('heartbeat ages: never, 42s, 3m 10s, 2h 5m, 3d 4h', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  const ago = (s: number) => new Date(now - s * 1000).toISOString();
  assert.equal(['never', ago(0), ago(42), ago(190), ago(2 * 3600 + 5 * 60 + 59), ago(3 * 86_400 + 4 * 3600)].map((t) => heartbeatAge(t, now)),
    ['never', '0s', '42s', '3m 10s', '2h 5m', '3d 4h']);
});
test.run();

let api: Api;
const C = suite('svc cluster over a server');
C.before(async () => { api = await boot({ env: { SERVICE_CLUSTER_SECRET: SECRET } }); });
C.after(async () => { await api.close(); });
const env = () => ({ SERVICE_SERVER_URL: api.s.url, SERVICE_AUTH_TOKEN: api.s.token, SERVICE_CLUSTER_SECRET: SECRET });
// Commands that succeed run in this process (a child costs a second of start-up); failures need a child for the exit code.
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  Object.assign(process.env, env());
  return { code: 0, stdout: await svcOut(api.repo.dir, ['cluster', ...args]), stderr: '' };
}
const child = (args: string[]) => runCli(['cluster', ...args], { cwd: api.repo.dir, env: env() });

C('nodes: "No nodes registered." on an empty cluster, then a table with status, slots and heartbeat age; --json-output is the server\'s list', async () => {
  const empty = await cli(['nodes']);
  assert.equal([empty.code, empty.stdout.trim()], [0, 'No nodes registered.'], empty.stderr);
  const a = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'alpha', url: 'http://alpha', capacity: { max_agents: 4 }, labels: { zone: 'eu' } })).body;
  const b = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'beta', url: 'http://beta' })).body;
  await call(api.s, 'POST', `/cluster/nodes/${b.id}/drain`, SECRET);
  const r = await cli(['nodes']);
  assert.is(r.code, 0, r.stderr);
  const [head, ...lines] = r.stdout.trim().split('\n');
  assert.match(head!, /^ID\s+NAME\s+STATUS\s+SLOTS\s+AGENTS\s+HEARTBEAT\s+URL\s+LABELS$/);
  assert.match(lines[0]!, new RegExp(`^${a.id}\\s+alpha\\s+online\\s+4/4\\s+0\\s+\\d+s\\s+http://alpha\\s+zone=eu$`));
  assert.match(lines[1]!, new RegExp(`^${b.id}\\s+beta\\s+draining\\s+6/6`));
  const drained = await cli(['nodes', '--status', 'draining', '--json-output']);
  assert.equal(JSON.parse(drained.stdout).map((n: { id: string }) => n.id), [b.id]);
});

C('status: counts, capacity and the node table; a server that cannot be reached exits 5 naming it', async () => {
  const r = await cli(['status']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'Topology: star');
  assert.match(r.stdout, 'Nodes: 2 total, 1 online, 0 cordoned, 1 draining, 0 offline');
  assert.match(r.stdout, 'Capacity: 4 agents on online nodes, 4 free slots, 0 agents active');
  assert.is(JSON.parse((await cli(['status', '--json-output'])).stdout).total_nodes, 2);
  const down = await child(['status', '--server-url', 'http://127.0.0.1:9']);
  assert.equal([down.code, down.stderr.trim()], [5, 'svc cluster status: Cannot connect to task server at http://127.0.0.1:9']);
});

C('token: a node token the server accepts, with the scopes asked for; bad arguments exit 2', async () => {
  const node = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'gamma', url: 'http://gamma' })).body;
  const r = await cli(['token', '--node', node.id, '--scopes', 'node:heartbeat', '--hours', '1', '--json']);
  assert.is(r.code, 0, r.stderr);
  const issued = JSON.parse(r.stdout);
  assert.equal([issued.node_id, issued.scopes], [node.id, ['node:heartbeat']]);
  const beat = await call(api.s, 'POST', `/cluster/nodes/${node.id}/heartbeat`, issued.token, { available_slots: 1, active_agents: 0 });
  assert.is(beat.status, 200, JSON.stringify(beat.body));
  assert.is((await call(api.s, 'POST', `/cluster/nodes/${node.id}/cordon`, issued.token)).status, 403);
  const bad = await child(['token', '--node', node.id, '--scopes', 'node:everything']);
  assert.equal([bad.code, bad.stderr.split('\n')[0]], [2, 'svc cluster token: --scopes takes node:register, node:heartbeat and node:admin, comma-separated']);
});

C.run();
