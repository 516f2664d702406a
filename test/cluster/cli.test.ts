// `svc cluster status|nodes|token` against a real server, and how heartbeat ages print.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { heartbeatAge } from '../../src/cli/cluster-view.ts';
import { GENESIS, signReceipt } from '../../src/cluster/index.ts';
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

C('claims log|head|verify over the journal the server wrote: intact (0), forked (2), broken (1)', async () => {
  const keys = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(5));
  const g = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'signer', url: 'http://s', public_key: Buffer.from(keys.publicKey).toString('base64') })).body;
  const receipt = (prev: string, task: string) => signReceipt({ schema_version: 1, kind: 'claim', node_id: g.id, task_id: task, prev_entry_hash: prev }, keys.secretKey);
  const r1 = receipt(GENESIS, 'task-1'), r2 = receipt(r1.entry_hash, 'task-2');
  assert.is((await call(api.s, 'POST', '/cluster/claims/gossip', g.auth_token, { receipts: [r1, r2] })).body.accepted, 2);
  await api.s.settled();
  assert.is((await cli(['claims', 'verify'])).stdout.trim(), `intact: 2 entries, head ${r2.entry_hash}`);
  assert.is((await cli(['claims', 'head'])).stdout.trim(), r2.entry_hash);
  const log = (await cli(['claims', 'log'])).stdout.trim().split('\n');
  assert.equal([log.length, log[1]!.split(/\s+/).slice(0, 4)], [3, ['1', 'claim', g.id, 'task-1']]);
  assert.is((await call(api.s, 'POST', '/cluster/claims/gossip', g.auth_token, { receipts: [receipt(r1.entry_hash, 'task-3')] })).body.forked, true);
  await api.s.settled();
  const forked = await child(['claims', 'verify']);
  assert.equal([forked.code, forked.stderr.trim()], [2, 'svc cluster claims verify: forked: 1 fork record(s), the first at entry 3; the chain of 3 entries is intact']);
  const file = join(api.repo.dir, '.sdd', 'cluster', 'claim_journal.jsonl');
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  writeFileSync(file, [lines[1], lines[0], lines[2]].join('\n') + '\n');
  const broken = await child(['claims', 'verify']);
  assert.equal([broken.code, broken.stderr.trim()], [1, `svc cluster claims verify: broken at entry 1 of 3: prev_entry_hash ${r1.entry_hash} does not link to ${GENESIS}`]);
});

C.run();
