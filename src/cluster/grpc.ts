// ClusterService over gRPC (proto/svc/cluster/v1/cluster.proto): the same service, the same scopes.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Value, type TSchema } from '../lib/typebox.ts';
import { holdsScope, type Authenticator } from '../auth/index.ts';
import { forbidden, HttpError, unprocessable } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { NodeScope, Principal } from '../lib/route.ts';
import { StorageUnavailable } from '../store/types.ts';
import type { OperatorEvent } from './registry.ts';
import { HeartbeatRequest, NodeRegisterRequest, type ClusterNode, type StealResponse } from './schema.ts';
import type { ClusterService } from './service.ts';

/** The proto file, beside src/ and dist/ alike. */
export const PROTO_PATH = fileURLToPath(new URL('../../proto/svc/cluster/v1/cluster.proto', import.meta.url));
/** How the proto is loaded, by the server and by clients that want the same shapes. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

export interface GrpcDeps {
  service: ClusterService;
  steal: (depths: Readonly<Record<string, number>>, who: Principal) => Promise<StealResponse>;
  authenticator: Authenticator;
  log: Logger;
  host: string;
  port: number;
  /** PEM certificate and key: the port speaks TLS. */
  tls?: { cert: Buffer; key: Buffer };
}

export interface GrpcServer {
  port: number;
  close(): Promise<void>;
}

const CODES: Record<number, grpc.status> = {
  401: grpc.status.UNAUTHENTICATED, 403: grpc.status.PERMISSION_DENIED, 404: grpc.status.NOT_FOUND, 409: grpc.status.FAILED_PRECONDITION,
  422: grpc.status.INVALID_ARGUMENT, 429: grpc.status.RESOURCE_EXHAUSTED, 503: grpc.status.UNAVAILABLE,
};
const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', role: 'viewer', tenant: null, actor: 'anonymous' });

// Errors are data: the HTTP status of a domain error picks the gRPC code; anything else is logged, never sent.
function toStatus(err: unknown, log: Logger): Partial<grpc.StatusObject> {
  if (err instanceof HttpError) return { code: CODES[err.status] ?? grpc.status.UNKNOWN, details: err.detail };
  if (err instanceof StorageUnavailable) return { code: grpc.status.UNAVAILABLE, details: `storage unavailable: ${err.code}` };
  log.error('cluster RPC failed', err);
  return { code: grpc.status.INTERNAL, details: 'internal error' };
}

function checked<T>(schema: TSchema, value: unknown): T {
  const first = Value.Errors(schema, value).First();
  if (first) throw unprocessable(`${first.path || '/'}: ${first.message}`);
  return value as T;
}

// Proto messages → the HTTP bodies (zeros and empties mean "not given"), checked against the same schemas.
const given = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== 0 && v !== '' && v !== false && !(Array.isArray(v) && !v.length))) as Partial<T>;
function registerBody(r: any): NodeRegisterRequest {
  const labels = r.labels && Object.keys(r.labels).length ? { labels: r.labels } : {};
  const capacity = r.capacity ? given(r.capacity) : {};
  return checked(NodeRegisterRequest, { ...given({ name: r.name, url: r.url, public_key: r.public_key, cell_ids: r.cell_ids }), ...labels, ...(Object.keys(capacity).length ? { capacity } : {}) });
}
const nodeInfo = (n: ClusterNode) => ({ ...n });

/** Bind the RPC server; resolves with the port it listens on. */
export async function startGrpc(deps: GrpcDeps): Promise<GrpcServer> {
  const pkg = grpc.loadPackageDefinition(await protoLoader.load(PROTO_PATH, LOADER_OPTIONS)) as any;
  const server = new grpc.Server();
  server.addService(pkg.svc.cluster.v1.ClusterService.service, handlers(deps));
  const creds = deps.tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: deps.tls.cert, private_key: deps.tls.key }], false) : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(`${deps.host.includes(':') ? `[${deps.host}]` : deps.host}:${deps.port}`, creds, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      // In-flight calls get a moment; streams that stay open are cut.
      const force = setTimeout(() => { server.forceShutdown(); resolve(); }, 1000);
      server.tryShutdown(() => { clearTimeout(force); resolve(); });
    }),
  };
}

// One answer per heartbeat on the stream; the credential is checked once, when the stream opens.
function streamHeartbeats(call: grpc.ServerDuplexStream<any, any>, identify: (m: grpc.Metadata, s: NodeScope) => Promise<Principal>,
  beat: (req: any, who: Principal) => Promise<unknown>, log: Logger): void {
  let chain = Promise.resolve();
  let failed = false;
  const fail = (err: unknown) => { if (!failed) { failed = true; call.emit('error', toStatus(err, log)); } };
  const who = identify(call.metadata, 'node:heartbeat');
  who.catch(fail);
  call.on('data', (req) => {
    chain = chain.then(async () => {
      if (failed) return;
      call.write(await beat(req, await who));
    }).catch(fail);
  });
  call.on('end', () => { void chain.then(() => { if (!failed) call.end(); }); });
}

// Each method: who calls (the scope it needs, none for reads), then the same service call as over HTTP.
function handlers(deps: GrpcDeps): grpc.UntypedServiceImplementation {
  const { service, log } = deps;
  const identify = async (metadata: grpc.Metadata, scope: NodeScope): Promise<Principal> => {
    const auth = metadata.get('authorization')[0];
    const who = await deps.authenticator.resolve(typeof auth === 'string' ? auth : undefined);
    if (!holdsScope(who, scope)) throw forbidden(`Token lacks required scope '${scope}'`);
    return who;
  };
  const unary = (scope: NodeScope | null, run: (req: any, who: Principal) => Promise<unknown> | unknown) =>
    (call: grpc.ServerUnaryCall<any, any>, done: grpc.sendUnaryData<any>) => {
      void (async () => run(call.request, scope ? await identify(call.metadata, scope) : ANONYMOUS))()
        .then((v) => done(null, v), (err) => done(toStatus(err, log)));
    };
  const beat = async (req: any, who: Principal) => ({
    acknowledged: true,
    node: nodeInfo(await service.heartbeat(req.node_id, checked(HeartbeatRequest, { available_slots: req.available_slots, active_agents: req.active_agents }), who)),
  });
  const operator = (event: OperatorEvent) => unary('node:admin', async (req, who) => service.operate(req.node_id, event, who));
  return {
    RegisterNode: unary('node:register', async (req, who) => {
      const { auth_token, ...node } = await service.register(registerBody(req), who);
      return { node: nodeInfo(node), auth_token };
    }),
    Heartbeat: unary('node:heartbeat', beat),
    StreamHeartbeats: (call: grpc.ServerDuplexStream<any, any>) => streamHeartbeats(call, identify, beat, log),
    ListNodes: unary(null, (req) => ({ nodes: service.list(req.status_filter && req.status_filter !== 'NODE_STATUS_UNSPECIFIED' ? String(req.status_filter).toLowerCase() : undefined) })),
    GetClusterStatus: unary(null, () => {
      const s = service.status();
      return { ...s, claimed: Object.fromEntries(Object.entries(s.claimed).map(([node, ids]) => [node, { task_ids: ids }])) };
    }),
    Cordon: operator('cordon'),
    Uncordon: operator('uncordon'),
    Drain: operator('drain'),
    Unregister: unary('node:admin', async (req, who) => ({ removed: true, returned_task_ids: await service.remove(req.node_id, who) })),
    Steal: unary('node:admin', (req, who) => deps.steal(req.queue_depths ?? {}, who)),
  };
}
