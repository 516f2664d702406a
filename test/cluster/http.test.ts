// The cluster over a real `svc up`: every route × every kind of credential, registration, heartbeats,
// cordon and drain on the task API, lease fencing, revocation, audit, and a restart.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import nacl from 'tweetnacl';
import { GENESIS, signReceipt } from '../../src/cluster/index.ts';
import { boot, type Api } from '../api/support.ts';
import { ALL_SCOPES, SECRET, call, forge, metric, type Reply } from './support.ts';

let api: Api;
const tok: Record<string, string> = {};
let A = '', B = '';
const T = suite('cluster over HTTP');

T.before(async () => {
  api = await boot({ env: { SERVICE_CLUSTER_SECRET: SECRET } });
  const a = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'worker-a', url: 'http://a:9000' });
  const b = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'worker-b', url: 'http://b:9000' });
  assert.is(a.status, 201, JSON.stringify(a.body));
  A = a.body.id; B = b.body.id;
  tok.a = a.body.auth_token; tok.b = b.body.auth_token;
  tok.heartbeatOnly = await forge(A, ['node:heartbeat']);
  tok.registerOnly = await forge(A, ['node:register']);
  tok.bad = await forge(A, ALL_SCOPES, { key: 'not-the-cluster-secret-0123456789abcdef' });
  tok.expired = await forge(A, ALL_SCOPES, { expS: -60 });
  tok.none = await forge(A, ALL_SCOPES, { alg: 'none' });
  tok.hs512 = await forge(A, ALL_SCOPES, { alg: 'HS512' });
  tok.revoked = await forge(A, ALL_SCOPES, { jti: 'to-be-revoked' });
  assert.is((await call(api.s, 'GET', '/cluster/nodes', tok.revoked)).status, 200, 'works before its revocation');
  assert.is((await call(api.s, 'POST', '/cluster/tokens/revoke', api.s.token, { jti: 'to-be-revoked' })).status, 200);
});
T.after(async () => { await api.close(); });

type Row = { method: string; path: () => string; body?: unknown; scope: string | null; ok: number; good: () => string; other?: number };
const rows: Row[] = [
  { method: 'POST', path: () => '/cluster/nodes', body: { name: 'matrix', url: 'http://m' }, scope: 'node:register', ok: 201, good: () => SECRET },
  { method: 'POST', path: () => `/cluster/nodes/${A}/heartbeat`, body: { available_slots: 6, active_agents: 0 }, scope: 'node:heartbeat', ok: 200, good: () => tok.a!, other: 403 },
  { method: 'POST', path: () => '/cluster/claims/gossip', body: { receipts: [] }, scope: 'node:heartbeat', ok: 200, good: () => tok.a!, other: 200 },
  { method: 'POST', path: () => `/cluster/nodes/${A}/cordon`, scope: 'node:admin', ok: 200, good: () => SECRET },
  { method: 'POST', path: () => `/cluster/nodes/${A}/uncordon`, scope: 'node:admin', ok: 200, good: () => api.s.token },
  { method: 'POST', path: () => `/cluster/nodes/${A}/drain`, scope: 'node:admin', ok: 200, good: () => SECRET },
  { method: 'POST', path: () => `/cluster/nodes/${A}/uncordon`, scope: 'node:admin', ok: 200, good: () => SECRET },
  { method: 'POST', path: () => '/cluster/tokens/revoke', body: { jti: 'nothing-issued' }, scope: 'node:admin', ok: 200, good: () => api.s.token },
  { method: 'POST', path: () => '/cluster/steal', body: { queue_depths: {} }, scope: 'node:admin', ok: 200, good: () => SECRET },
  { method: 'GET', path: () => '/cluster/nodes', scope: null, ok: 200, good: () => tok.a! },
  { method: 'GET', path: () => '/cluster/status', scope: null, ok: 200, good: () => tok.heartbeatOnly! },
];
const wrongScope = (scope: string | null) => (scope === 'node:register' ? tok.heartbeatOnly : scope === 'node:heartbeat' ? tok.registerOnly : tok.a)!;

T('every route × {no token, bad, expired, alg none, HS512, revoked, wrong scope, other node, right}', async () => {
  const unauthenticated: [string, string | null, string][] = [
    ['no token', null, 'Missing or invalid Authorization header'], ['bad signature', tok.bad!, 'Invalid or expired token'],
    ['expired', tok.expired!, 'Invalid or expired token'], ['alg none', tok.none!, 'Invalid or expired token'],
    ['HS512', tok.hs512!, 'Invalid or expired token'], ['revoked', tok.revoked!, 'Token has been revoked'],
  ];
  for (const row of rows) {
    const name = `${row.method} ${row.path()}`;
    for (const [what, token, detail] of unauthenticated) {
      const r = await call(api.s, row.method, row.path(), token, row.body);
      assert.equal([r.status, r.body?.detail], [401, detail], `${name} with ${what}`);
    }
    if (row.scope === 'node:admin') {
      const beatOnly = await call(api.s, row.method, row.path(), tok.heartbeatOnly!, row.body);
      assert.equal([beatOnly.status, beatOnly.body.detail], [403, "Token lacks required scope 'node:admin' (has: [node:heartbeat])"], `${name} with a heartbeat-only token`);
    }
    const wrong = await call(api.s, row.method, row.path(), wrongScope(row.scope), row.body);
    if (row.scope) assert.equal([wrong.status, wrong.body.detail], [403, wrong.body.detail?.startsWith(`Token lacks required scope '${row.scope}'`) ? wrong.body.detail : 'wrong detail'], `${name} wrong scope`);
    else assert.is(wrong.status, 200, `${name} needs no scope`);
    // (A node token registers its own node: "another node" has no meaning there.)
    if (row.scope !== 'node:register') {
      const other = await call(api.s, row.method, row.path(), tok.b!, row.body);
      assert.is(other.status, row.other ?? (row.scope === null ? row.ok : 403), `${name} with another node's token: ${JSON.stringify(other.body)}`);
    }
    const right = await call(api.s, row.method, row.path(), row.good(), row.body);
    assert.is(right.status, row.ok, `${name} with the right credential: ${JSON.stringify(right.body)}`);
  }
  const other = await call(api.s, 'POST', `/cluster/nodes/${A}/heartbeat`, tok.b!, { available_slots: 1, active_agents: 1 });
  assert.is(other.body.detail, `Token for node '${B}' cannot act for node '${A}'`);
  // DELETE last: it removes a node made for it.
  const c = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'doomed', url: 'http://d' })).body;
  for (const [, token] of unauthenticated) assert.is((await call(api.s, 'DELETE', `/cluster/nodes/${c.id}`, token)).status, 401);
  assert.is((await call(api.s, 'DELETE', `/cluster/nodes/${c.id}`, c.auth_token)).status, 403, 'a node cannot remove itself with its own token');
  assert.is((await call(api.s, 'DELETE', `/cluster/nodes/${c.id}`, SECRET)).status, 204);
  assert.equal((await call(api.s, 'DELETE', `/cluster/nodes/${c.id}`, SECRET)).body, { detail: `Node '${c.id}' not found` });
});

T('registration: 201 with the node fields and a node token; the same (name, url) is the same node; a blank url never matches', async () => {
  const first = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'idem', url: 'http://idem', capacity: { max_agents: 3 }, labels: { zone: 'a' } });
  const again = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'idem', url: 'http://idem', capacity: { max_agents: 4 } });
  assert.equal([first.status, again.status], [201, 201]);
  assert.is(again.body.id, first.body.id);
  assert.is(again.body.registered_at, first.body.registered_at);
  assert.equal([again.body.capacity.max_agents, again.body.labels], [4, { zone: 'a' }]);
  assert.equal(Object.keys(first.body).sort(), ['auth_token', 'capacity', 'cell_ids', 'id', 'labels', 'last_heartbeat', 'name', 'registered_at', 'status', 'url']);
  assert.match(first.body.id, /^[0-9a-f]{12}$/);
  assert.is(first.body.status, 'ONLINE');
  const claims = JSON.parse(Buffer.from(first.body.auth_token.split('.')[1], 'base64url').toString());
  assert.equal([claims.sub, claims.user_id, claims.scopes, claims.exp - claims.iat], [first.body.id, first.body.id, ['node:register', 'node:heartbeat'], 24 * 3600]);
  assert.type(claims.jti, 'string');
  const blank1 = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'idem', url: '' });
  const blank2 = await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'idem', url: '' });
  assert.is.not(blank1.body.id, blank2.body.id);
  const list = (await call(api.s, 'GET', '/cluster/nodes', api.s.token)).body as { name: string }[];
  assert.is(list.filter((n) => n.name === 'idem').length, 3);
});

T('heartbeats: slots and agents reported; an unknown or evicted node answers 404 so the worker re-registers; status filter is lowercase', async () => {
  const r = await call(api.s, 'POST', `/cluster/nodes/${A}/heartbeat`, tok.a!, { available_slots: 2, active_agents: 4, labels: { gpu: 'none' } });
  assert.equal([r.status, r.body.capacity.available_slots, r.body.capacity.active_agents, r.body.labels], [200, 2, 4, { gpu: 'none' }]);
  const unknown = await call(api.s, 'POST', '/cluster/nodes/0123456789ab/heartbeat', SECRET, { available_slots: 1, active_agents: 0 });
  assert.equal([unknown.status, unknown.body.detail], [404, "Node '0123456789ab' not registered"]);
  assert.is((await call(api.s, 'POST', `/cluster/nodes/${A}/heartbeat`, tok.a!, {})).status, 422);
  const online = await call(api.s, 'GET', '/cluster/nodes?status=online', tok.a!);
  assert.ok(online.body.every((n: { status: string }) => n.status === 'ONLINE') && online.body.length >= 2);
  assert.is((await call(api.s, 'GET', '/cluster/nodes?status=ONLINE', tok.a!)).status, 422);
});

const claimNext = (token: string) => call(api.s, 'GET', '/tasks/next/backend', token);

T('node tokens on the task API: claims record node_id; cordoned and draining nodes get a 404 with the reason', async () => {
  const t = await api.create({ role: 'backend' });
  const got = await claimNext(tok.a!);
  assert.equal([got.status, got.body.id, got.body.node_id], [200, t.id, A]);
  await api.create({ role: 'backend' });
  for (const event of ['cordon', 'drain'] as const) {
    await call(api.s, 'POST', `/cluster/nodes/${B}/${event}`, SECRET);
    const refused = await claimNext(tok.b!);
    assert.equal([refused.status, refused.body.detail], [404, `Node '${B}' is ${event === 'cordon' ? 'cordoned' : 'draining'}: no new tasks are assigned to it`]);
    await call(api.s, 'POST', `/cluster/nodes/${B}/uncordon`, SECRET);
  }
  const status = (await call(api.s, 'GET', '/cluster/status', api.s.token)).body;
  assert.ok(status.claimed[A].includes(t.id), JSON.stringify(status.claimed));
  const byB = await claimNext(tok.b!);
  assert.equal([byB.status, byB.body.node_id], [200, B]);
  // A node token is role agent on the task API: no admin routes.
  assert.equal([(await call(api.s, 'POST', '/drain', tok.b!)).status, (await call(api.s, 'GET', '/tasks?limit=1', tok.b!)).status], [403, 200]);
});

T('lease fencing: complete, fail, release and progress from a node that no longer holds the task answer 409', async () => {
  const t = await api.create({ role: 'backend', priority: 0 });
  assert.is((await claimNext(tok.a!)).body.id, t.id);
  assert.is((await api.verb(t.id, 'release', { reason: 'operator' })).status, 200);
  const held = `Task '${t.id}' is no longer held by node '${A}'`;
  const late = await call(api.s, 'POST', `/tasks/${t.id}/complete`, tok.a!, { result_summary: 'done anyway' });
  assert.equal([late.status, late.body.detail], [409, held]);
  assert.is((await call(api.s, 'POST', `/tasks/${t.id}/claim`, tok.b!)).body.node_id, B);
  for (const [verb, body] of [['complete', { result_summary: 'x' }], ['fail', { reason: 'x' }], ['release', {}], ['progress', { message: 'x' }]] as const) {
    const r = await call(api.s, 'POST', `/tasks/${t.id}/${verb}`, tok.a!, body);
    assert.equal([r.status, r.body.detail], [409, held], verb);
  }
  const done = await call(api.s, 'POST', `/tasks/${t.id}/complete`, tok.b!, { result_summary: 'done by b' });
  assert.equal([done.status, done.body.status], [200, 'done']);
  const text = (await api.s.api('GET', '/metrics')).body as string;
  assert.ok(metric(text, 'svc_cluster_fenced_writes_total') >= 5);
  assert.ok(metric(text, 'svc_cluster_heartbeats_total') >= 2);
  assert.ok(metric(text, 'svc_cluster_nodes{status="online"}') >= 2);
});

T('steal: only claimed tasks of a donor above 5 move (3 at most), back to open for an idle node; the donor\'s late report is refused', async () => {
  const donor = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'donor', url: 'http://donor' })).body;
  const idle = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'idle', url: 'http://idle', capacity: { max_agents: 10 } })).body;
  for (let i = 0; i < 8; i++) await api.create({ role: 'stealme', priority: i === 0 ? 0 : 1 });
  const claimed: any[] = [];
  for (let i = 0; i < 8; i++) claimed.push((await call(api.s, 'GET', '/tasks/next/stealme', donor.auth_token)).body);
  assert.ok(claimed.every((t) => t.node_id === donor.id));
  // The most urgent task is started: it must never move.
  assert.is((await call(api.s, 'POST', `/tasks/${claimed[0].id}/progress`, donor.auth_token, { message: 'started' })).body.status, 'in_progress');
  const under = await call(api.s, 'POST', '/cluster/steal', SECRET, { queue_depths: { [donor.id]: 5 } });
  assert.equal(under.body, { actions: [], total: 0 }, 'a donor at the threshold keeps its tasks');
  const r = await call(api.s, 'POST', '/cluster/steal', api.s.token, { queue_depths: { [donor.id]: 8 } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.total, 3);
  assert.equal(r.body.actions.map((a: any) => [a.donor, a.receiver, a.task_ids.length]), [[donor.id, idle.id, 3]]);
  const moved: string[] = r.body.actions[0].task_ids;
  assert.not.ok(moved.includes(claimed[0].id), 'the started task stays');
  for (const id of moved) {
    const t = await api.get(id);
    const before = claimed.find((c) => c.id === id);
    assert.equal([t.status, t.node_id, t.version], ['open', null, before.version + 1]);
    assert.match(t.status_reason, `stolen from node ${donor.id} for node ${idle.id}`);
  }
  const late = await call(api.s, 'POST', `/tasks/${moved[0]}/complete`, donor.auth_token, { result_summary: 'finished late' });
  assert.equal([late.status, late.body.detail], [409, `Task '${moved[0]}' is no longer held by node '${donor.id}'`]);
  const mine = await call(api.s, 'GET', '/tasks/next/stealme', idle.auth_token);
  assert.equal([mine.status, mine.body.node_id, moved.includes(mine.body.id)], [200, idle.id, true]);
  const text = (await api.s.api('GET', '/metrics')).body as string;
  assert.is(metric(text, 'svc_cluster_stolen_tasks_total'), 3);
});

T('claim gossip: applied on the head, duplicate, rejected for a forged signature or tampering, forked on a wrong link (the push stops there)', async () => {
  const keys = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(3));
  const g = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'gossiper', url: 'http://g', public_key: Buffer.from(keys.publicKey).toString('base64') })).body;
  const receipt = (prev: string, task: string, sk = keys.secretKey) => signReceipt({ schema_version: 1, kind: 'claim', node_id: g.id, task_id: task, claimer_id: 'backend-7', prev_entry_hash: prev }, sk);
  const push = async (receipts: unknown[]) => { const r = await call(api.s, 'POST', '/cluster/claims/gossip', g.auth_token, { receipts, node_id: g.id }); assert.is(r.status, 200, JSON.stringify(r.body)); return r.body; };
  const r1 = receipt(GENESIS, 't1'), r2 = receipt(r1.entry_hash, 't2');
  const first = await push([r1, r2]);
  assert.equal([first.accepted, first.head, first.forked, first.results.map((x: any) => x.status)], [2, r2.entry_hash, false, ['applied', 'applied']]);
  assert.equal((await push([r1])).results, [{ entry_hash: r1.entry_hash, status: 'duplicate', reason: null }]);
  const forged = receipt(r2.entry_hash, 't3', nacl.sign.keyPair().secretKey);
  const tampered = { ...receipt(r2.entry_hash, 't3'), task_id: 'someone-else' };
  const bad = await push([forged, tampered]);
  assert.equal(bad.results.map((x: any) => [x.status, x.reason]), [
    ['rejected', `signature does not verify with the key of node '${g.id}'`], ['rejected', 'entry_hash mismatch (tampered payload)'],
  ]);
  const stale = receipt(r1.entry_hash, 't4');
  const fork = await push([stale, receipt(stale.entry_hash, 't5')]);
  assert.equal([fork.forked, fork.results.length, fork.results[0].status], [true, 1, 'forked']);
  assert.match(fork.results[0].reason, `does not extend local head ${r2.entry_hash}`);
  assert.is.not(fork.head, r2.entry_hash, 'the fork record is the new head');
  assert.is((await call(api.s, 'POST', '/cluster/claims/gossip', g.auth_token, { receipts: [{ kind: 'claim' }] })).status, 422);
  await api.s.settled();
  const lines = readFileSync(join(api.repo.dir, '.sdd', 'cluster', 'claim_journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.map((l) => l.kind), ['claim', 'claim', 'fork']);
  assert.equal([lines[2].fork_entry_hash, lines[2].prev_entry_hash, lines[2].entry_hash], [stale.entry_hash, r2.entry_hash, fork.head]);
  const text = (await api.s.api('GET', '/metrics')).body as string;
  assert.equal(['applied', 'duplicate', 'rejected', 'forked'].map((k) => metric(text, `svc_cluster_gossip_receipts_total{result="${k}"}`)), [2, 1, 2, 1]);
});

T('revocation by node: every token of the node issued so far answers 401; issue and revoke are audited', async () => {
  const c = (await call(api.s, 'POST', '/cluster/nodes', SECRET, { name: 'rev', url: 'http://rev' })).body;
  const beat = (): Promise<Reply> => call(api.s, 'POST', `/cluster/nodes/${c.id}/heartbeat`, c.auth_token, { available_slots: 1, active_agents: 0 });
  assert.is((await beat()).status, 200);
  assert.is((await call(api.s, 'POST', '/cluster/tokens/revoke', SECRET, {})).status, 422);
  assert.is((await call(api.s, 'POST', '/cluster/tokens/revoke', SECRET, { node_id: c.id })).status, 200);
  assert.equal([(await beat()).status, (await beat()).body.detail], [401, 'Token has been revoked']);
  const dir = join(api.repo.dir, '.sdd', 'audit');
  const actions = readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n')).filter(Boolean).map((l) => JSON.parse(l));
  assert.ok(actions.some((r) => r.action === 'cluster.token.issue' && r.details.node_id === c.id));
  assert.ok(actions.some((r) => r.action === 'cluster.token.revoke' && r.details.node_id === c.id && r.actor === 'cluster-secret'));
  assert.ok(actions.some((r) => r.action === 'cluster.token.revoke' && r.resource_id === 'to-be-revoked'));
  assert.ok(actions.some((r) => r.action === 'cluster.node.register' && r.resource_id === A));
  assert.ok(actions.some((r) => r.action === 'cluster.steal' && r.details.total === 3));
  assert.ok(actions.some((r) => r.action === 'task.release' && r.actor === 'cluster'), 'each stolen task\'s release is audited');
});

T('restart: persisted nodes come back OFFLINE with last_heartbeat never; their claims stay; a heartbeat brings them online', async () => {
  await api.restart();
  const nodes = (await call(api.s, 'GET', '/cluster/nodes', api.s.token)).body as { id: string; status: string; last_heartbeat: string }[];
  assert.ok(nodes.length >= 5);
  assert.ok(nodes.every((n) => n.status === 'OFFLINE' && n.last_heartbeat === 'never'), JSON.stringify(nodes));
  const status = (await call(api.s, 'GET', '/cluster/status', api.s.token)).body;
  assert.equal([status.online_nodes, status.offline_nodes], [0, nodes.length]);
  assert.ok(status.claimed[A]?.length >= 1, 'an offline node\'s claimed tasks are listed');
  const r = await call(api.s, 'POST', `/cluster/nodes/${A}/heartbeat`, tok.a!, { available_slots: 5, active_agents: 1 });
  assert.equal([r.status, r.body.status], [200, 'ONLINE']);
  assert.not.ok(existsSync(join(api.repo.dir, '.sdd', 'secrets', 'cluster.secret')), 'SERVICE_CLUSTER_SECRET set: no secret file');
});

T.run();
