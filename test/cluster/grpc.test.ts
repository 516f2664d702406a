// The cluster RPC: every method × every kind of credential over `svc up --grpc-port 0`, streams, and TLS.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAuthenticator } from '../../src/auth/index.ts';
import { ClusterService, clusterMetrics, clusterFiles, createNodeTokens, type ClusterTasks } from '../../src/cluster/index.ts';
import { LOADER_OPTIONS, PROTO_PATH, startGrpc } from '../../src/cluster/grpc.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createRecordStore, sddLayout } from '../../src/store/index.ts';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { ALL_SCOPES, SECRET, call, forge } from './support.ts';

const S = grpc.status;
type Out = { code: number; details?: string; value?: any };
const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS)) as any;
const clientFor = (target: string, creds = grpc.credentials.createInsecure()) => new pkg.svc.cluster.v1.ClusterService(target, creds);
const meta = (token: string | null) => { const m = new grpc.Metadata(); if (token !== null) m.set('authorization', `Bearer ${token}`); return m; };

let repo: TempRepo, srv: RunningServer, client: any;
const tok: Record<string, string> = {};
let A = '', B = '';
const rpc = (method: string, req: unknown, token: string | null): Promise<Out> =>
  new Promise((done) => client[method](req, meta(token), (err: grpc.ServiceError | null, value: unknown) => done(err ? { code: err.code, details: err.details } : { code: S.OK, value })));

const G = suite('cluster RPC over svc up --grpc-port 0');
G.before(async () => {
  repo = makeRepo('svc-grpc-');
  srv = await startServer(repo.dir, { args: ['--no-orchestrator', '--grpc-port', '0'], env: { SERVICE_CLUSTER_SECRET: SECRET } });
  const info = JSON.parse(readFileSync(join(repo.dir, '.sdd', 'runtime', 'server.json'), 'utf8'));
  assert.type(info.grpc_port, 'number');
  client = clientFor(`127.0.0.1:${info.grpc_port}`);
  const a = await rpc('RegisterNode', { name: 'rpc-a', url: 'http://a', capacity: { max_agents: 3 } }, SECRET);
  assert.is(a.code, S.OK, a.details);
  A = a.value.node.id; tok.a = a.value.auth_token;
  const b = (await call(srv, 'POST', '/cluster/nodes', SECRET, { name: 'rpc-b', url: 'http://b' })).body;
  B = b.id; tok.b = b.auth_token;
  tok.heartbeatOnly = await forge(A, ['node:heartbeat']);
  tok.bad = await forge(A, ALL_SCOPES, { key: 'another-secret-another-secret-0123456789' });
  tok.expired = await forge(A, ALL_SCOPES, { expS: -5 });
  tok.revoked = await forge(A, ALL_SCOPES, { jti: 'rpc-revoked' });
  await call(srv, 'POST', '/cluster/tokens/revoke', SECRET, { jti: 'rpc-revoked' });
});
G.after(async () => { client?.close(); await srv?.stop(); repo.cleanup(); });

G('every method × {none, bad, expired, revoked, wrong scope, other node, right}: UNAUTHENTICATED vs PERMISSION_DENIED; reads need nothing', async () => {
  const doomed = (await rpc('RegisterNode', { name: 'doomed', url: 'http://d' }, SECRET)).value.node.id;
  const rows: [string, () => unknown, string | null, () => string][] = [
    ['RegisterNode', () => ({ name: 'm', url: 'http://m' }), 'node:register', () => SECRET],
    ['Heartbeat', () => ({ node_id: A, available_slots: 2, active_agents: 1 }), 'node:heartbeat', () => tok.a!],
    ['Cordon', () => ({ node_id: A }), 'node:admin', () => SECRET],
    ['Uncordon', () => ({ node_id: A }), 'node:admin', () => srv.token],
    ['Drain', () => ({ node_id: A }), 'node:admin', () => SECRET],
    ['Uncordon', () => ({ node_id: A }), 'node:admin', () => SECRET],
    ['Steal', () => ({ queue_depths: {} }), 'node:admin', () => SECRET],
    ['Unregister', () => ({ node_id: doomed }), 'node:admin', () => SECRET],
    ['ListNodes', () => ({}), null, () => ''],
    ['GetClusterStatus', () => ({}), null, () => ''],
  ];
  for (const [method, req, scope, good] of rows) {
    for (const [what, token] of [['none', null], ['bad', tok.bad!], ['expired', tok.expired!], ['revoked', tok.revoked!]] as const) {
      assert.is((await rpc(method, req(), token)).code, scope ? S.UNAUTHENTICATED : S.OK, `${method} ${what}`);
    }
    const wrong = await rpc(method, req(), scope === 'node:register' ? tok.heartbeatOnly! : tok.a!);
    assert.is(wrong.code, scope === 'node:register' || scope === 'node:admin' ? S.PERMISSION_DENIED : S.OK, `${method} wrong scope: ${wrong.details}`);
    if (scope === 'node:heartbeat') {
      const other = await rpc(method, req(), tok.b!);
      assert.equal([other.code, other.details], [S.PERMISSION_DENIED, `Token for node '${B}' cannot act for node '${A}'`]);
    }
    const right = await rpc(method, req(), good() || null);
    assert.is(right.code, S.OK, `${method}: ${right.details}`);
  }
  assert.equal((await rpc('Heartbeat', { node_id: '0123456789ab', available_slots: 1, active_agents: 0 }, SECRET)).code, S.NOT_FOUND);
  assert.equal((await rpc('Drain', { node_id: A }, SECRET)).code, S.OK);
  assert.equal((await rpc('Cordon', { node_id: A }, SECRET)).code, S.FAILED_PRECONDITION, 'the table refuses cordon on a draining node');
  assert.equal((await rpc('RegisterNode', { name: 'x', url: 'y', public_key: 'not-a-key' }, SECRET)).code, S.INVALID_ARGUMENT);
});

G('RegisterNode is idempotent by (name, url) and answers a node token; reads show the node; Unregister removes it', async () => {
  const first = await rpc('RegisterNode', { name: 'rpc-c', url: 'http://c' }, SECRET);
  const again = await rpc('RegisterNode', { name: 'rpc-c', url: 'http://c' }, SECRET);
  assert.is(again.value.node.id, first.value.node.id);
  assert.equal([first.value.node.status, first.value.node.capacity.max_agents], ['ONLINE', 6]);
  const claims = JSON.parse(Buffer.from(first.value.auth_token.split('.')[1], 'base64url').toString());
  assert.equal(claims.scopes, ['node:register', 'node:heartbeat']);
  const listed = await rpc('ListNodes', { status_filter: 'ONLINE' }, null);
  assert.ok(listed.value.nodes.some((n: any) => n.id === first.value.node.id));
  const status = await rpc('GetClusterStatus', {}, null);
  assert.is(status.value.total_nodes, listed.value.nodes.length + 1, 'A is draining, not online');
  assert.equal((await rpc('Unregister', { node_id: first.value.node.id }, SECRET)).value, { removed: true, returned_task_ids: [] });
  assert.is((await rpc('Unregister', { node_id: first.value.node.id }, SECRET)).code, S.NOT_FOUND);
});

G('StreamHeartbeats: one answer per heartbeat; no credential or another node\'s token ends the stream with the right code', async () => {
  const stream = (token: string | null, reqs: unknown[]) => new Promise<{ answers: any[]; code: number }>((done) => {
    const s = client.StreamHeartbeats(meta(token));
    const answers: any[] = [];
    s.on('data', (a: any) => answers.push(a));
    s.on('error', (e: grpc.ServiceError) => done({ answers, code: e.code }));
    s.on('status', (st: grpc.StatusObject) => { if (st.code === S.OK) done({ answers, code: S.OK }); });
    for (const r of reqs) s.write(r);
    s.end();
  });
  const ok = await stream(tok.b!, [1, 2, 3].map((n) => ({ node_id: B, available_slots: n, active_agents: 0 })));
  assert.equal([ok.code, ok.answers.map((a) => [a.acknowledged, a.node.capacity.available_slots])], [S.OK, [[true, 1], [true, 2], [true, 3]]]);
  assert.is((await stream(null, [{ node_id: B, available_slots: 1, active_agents: 0 }])).code, S.UNAUTHENTICATED);
  assert.is((await stream(tok.a!, [{ node_id: B, available_slots: 1, active_agents: 0 }])).code, S.PERMISSION_DENIED);
});

G.run();

// TLS, in process: a ClusterService over a temp tree and the RPC server with a self-signed certificate.
const T = suite('cluster RPC with TLS');
T('with cluster.grpc.cert and key the port speaks TLS: a client trusting the certificate reads, a plaintext one cannot', async () => {
  const tmp = makeTempDir();
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(tmp.dir, 'key.pem'), '-out', join(tmp.dir, 'cert.pem')], { stdio: 'ignore' });
    const layout = sddLayout(tmp.dir);
    const tokens = createNodeTokens({ secret: SECRET, clock: systemClock, newJti: () => 'j', expiryHours: 1 });
    const none: ClusterTasks = { heldByNode: () => new Map(), returnToOpen: async () => false, install() {} };
    const service = new ClusterService({
      store: createRecordStore({ layout, log: silentLogger(), committer: { touch() {} } }), file: clusterFiles(layout).nodes, clock: systemClock, log: silentLogger(),
      audit: { append: async () => undefined }, metrics: clusterMetrics(() => ({})), tokens, tasks: none, newId: () => 'abcdefabcdef', nodeTimeoutS: 60,
    });
    const authenticator = createAuthenticator({ layout, env: { disabled: false }, clock: systemClock, log: silentLogger(), cluster: tokens });
    const cert = readFileSync(join(tmp.dir, 'cert.pem'));
    const server = await startGrpc({ service, steal: async () => ({ actions: [], total: 0 }), authenticator, log: silentLogger(), host: '127.0.0.1', port: 0, tls: { cert, key: readFileSync(join(tmp.dir, 'key.pem')) } });
    try {
      const secure = clientFor(`localhost:${server.port}`, grpc.credentials.createSsl(cert));
      const reg = await new Promise<any>((done) => secure.RegisterNode({ name: 'tls' }, meta(SECRET), (e: unknown, v: unknown) => done(e ?? v)));
      assert.is(reg.node?.id, 'abcdefabcdef');
      const plain = clientFor(`127.0.0.1:${server.port}`);
      const refused = await new Promise<any>((done) => plain.ListNodes({}, new grpc.Metadata(), { deadline: Date.now() + 3000 }, (e: unknown) => done(e)));
      assert.is.not(refused?.code ?? S.OK, S.OK);
      secure.close(); plain.close();
    } finally {
      await server.close();
    }
  } finally {
    tmp.cleanup();
  }
});
T.run();
