// Builds the cluster of a server: secret, node tokens, registry, routes, the staleness sweep.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Registry } from 'prom-client';
import type { Authenticator } from '../auth/index.ts';
import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import type { SddLayout } from '../store/layout.ts';
import type { RecordStore } from '../store/types.ts';
import type { NodeHooks, Tasks } from '../tasks/index.ts';
import { clusterMetrics } from './metrics.ts';
import { nodeRoutes } from './routes.ts';
import type { GrpcDeps, GrpcServer } from './grpc.ts';
import { ClaimJournal } from './journal.ts';
import { gossipRoute, revokeRoute, stealRoute } from './routes-ops.ts';
import { loadClusterSecret, secretPath } from './secret.ts';
import { ClusterService, type ClusterAudit } from './service.ts';
import { createStealer } from './stealer.ts';
import { clusterTasks } from './tasks.ts';
import { createNodeTokens, type NodeTokens } from './tokens.ts';
import { clusterFiles, countByStatus } from './view.ts';

export interface ClusterSetupDeps {
  layout: SddLayout;
  store: RecordStore;
  tasks: Tasks;
  /** Installs the cluster's say over node claims and fenced writes (from the tasks domain). */
  installNodeHooks: (hooks: NodeHooks) => void;
  audit: ClusterAudit;
  clock: Clock;
  log: Logger;
  config: Config['cluster'];
  /** SERVICE_CLUSTER_SECRET, when set. */
  secret?: string;
  /** The /metrics registry. */
  registry?: Registry;
  /** Node ids (12 hex characters); random by default. */
  newId?: () => string;
  /** Who asked to kill an agent session (the agents domain's kill file), for the heartbeat answer. */
  killRequested?: (sid: string) => Promise<string | null>;
  /** The commit refs/sdd/state names now, for the heartbeat answer (workers mirror the board when it moved). */
  stateHead?: () => Promise<string | null>;
}

/** The cluster of one server. */
export interface Cluster {
  service: ClusterService;
  journal: ClaimJournal;
  tokens: NodeTokens;
  routes: Route[];
  /** Start the staleness sweep (every staleness_check_s). */
  start(): void;
  /** Serve the RPC when cluster.grpc.port is set (TLS with cert and key); resolves with its port, or null when off. */
  startRpc(authenticator: Authenticator, serverHost: string): Promise<number | null>;
  stop(): Promise<void>;
}

/** Load the secret and the registry (every node offline), install the node hooks on the task service, build the routes. */
export async function createCluster(deps: ClusterSetupDeps): Promise<Cluster> {
  const { config, log } = deps;
  const secret = await loadClusterSecret(deps.layout, deps.secret);
  if (secret.created) log.info(`created the cluster secret in ${secretPath(deps.layout)} (0600): workers register with it (--token)`);
  const tokens = createNodeTokens({ secret: secret.secret, clock: deps.clock, newJti: () => randomUUID(), expiryHours: config.token_expiry_hours });
  const tasks = clusterTasks(deps.tasks, deps.installNodeHooks);
  let service: ClusterService | undefined;
  const metrics = clusterMetrics(() => countByStatus(service?.entries() ?? []), deps.registry);
  service = new ClusterService({
    store: deps.store, file: clusterFiles(deps.layout).nodes, clock: deps.clock, log, audit: deps.audit, metrics, tokens, tasks,
    newId: deps.newId ?? (() => randomBytes(6).toString('hex')), nodeTimeoutS: config.node_timeout_s,
    ...(deps.killRequested ? { killRequested: deps.killRequested } : {}),
  });
  const loaded = await service.load();
  if (loaded) log.info(`cluster: ${loaded} node(s) in the registry, offline until they heartbeat`);
  const svc = service;
  tasks.install({ claimRefusal: (id) => svc.claimRefusal(id), fenced: () => metrics.fenced() });
  const steal = createStealer({ service: svc, tasks, audit: deps.audit, metrics });
  const journal = new ClaimJournal({
    store: deps.store, file: clusterFiles(deps.layout).journal, clock: deps.clock, log, metrics, audit: deps.audit,
    keyOf: (id) => svc.get(id)?.publicKey ?? null,
  });
  await journal.load();
  const routes = [...nodeRoutes(svc, deps.stateHead), stealRoute(steal), gossipRoute(journal), revokeRoute({ tokens, audit: deps.audit })];
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  let rpc: GrpcServer | undefined;
  return {
    service: svc, journal, tokens, routes,
    start() {
      timer = setInterval(() => {
        sweeping = svc.sweep().catch((err: Error) => log.error('cluster staleness sweep failed', err));
      }, config.staleness_check_s * 1000);
      timer.unref();
    },
    async startRpc(authenticator, serverHost) {
      if (config.grpc.port === undefined) return null;
      rpc = await serveRpc(deps, { service: svc, steal, authenticator, log, host: config.grpc.host ?? serverHost, port: config.grpc.port });
      return rpc.port;
    },
    async stop() {
      clearInterval(timer);
      await rpc?.close();
      await sweeping;
    },
  };
}

// The RPC server with TLS when cluster.grpc names a certificate and key (paths relative to the repository).
async function serveRpc(deps: ClusterSetupDeps, o: Omit<GrpcDeps, 'tls'>): Promise<GrpcServer> {
  const { cert, key } = deps.config.grpc;
  if (!cert !== !key) throw new Error('cluster.grpc: set both cert and key for TLS, or neither');
  const tls = cert && key ? { cert: await readFile(resolve(deps.layout.root, cert)), key: await readFile(resolve(deps.layout.root, key)) } : undefined;
  // Loaded only when an RPC port is configured: gRPC is not part of an ordinary start.
  const { startGrpc } = await import('./grpc.ts');
  const server = await startGrpc({ ...o, ...(tls ? { tls } : {}) });
  deps.log.info(`cluster RPC listening on ${o.host}:${server.port}${tls ? ' (TLS)' : ' (plaintext: set cluster.grpc.cert and key for TLS)'}`);
  return server;
}
