// Request and response shapes of the cluster (one TypeBox schema each: type, validator, OpenAPI component).
import { Type, type Static } from '../lib/typebox.ts';

const Str = (o: { maxLength?: number; minLength?: number; pattern?: string; description?: string } = {}) => Type.String({ maxLength: 2048, ...o });
const Count = (description: string) => Type.Integer({ minimum: 0, maximum: 100_000, description });

/** Node ids: 12 lowercase hex characters (DECISIONS.md Cluster). */
export const NODE_ID = /^[0-9a-f]{12}$/;
/** An Ed25519 public key: 32 bytes, standard base64. */
export const PUBLIC_KEY = '^[A-Za-z0-9+/]{43}=$';
/** `sha256:` and 64 lowercase hex digits. */
export const ENTRY_HASH = '^sha256:[0-9a-f]{64}$';

export const NodeStatus = Type.Union([Type.Literal('ONLINE'), Type.Literal('CORDONED'), Type.Literal('DRAINING'), Type.Literal('OFFLINE')], { description: 'Uppercase in the registry' });
export type NodeStatus = Static<typeof NodeStatus>;

export const NodeCapacity = Type.Object({
  max_agents: Count('Agents the node runs at once'),
  available_slots: Count('max_agents minus the node\'s active tasks, as it last reported'),
  active_agents: Count('Agents running on the node, as it last reported'),
  gpu_available: Type.Boolean(),
  supported_models: Type.Array(Str({ maxLength: 200 }), { maxItems: 100 }),
}, { $id: 'NodeCapacity' });
export type NodeCapacity = Static<typeof NodeCapacity>;

const Labels = Type.Record(Str({ maxLength: 128 }), Str({ maxLength: 512 }), { maxProperties: 64, description: 'Free-form key/value labels for affinity routing' });
const CellIds = Type.Array(Str({ maxLength: 128 }), { maxItems: 64 });
const PartialCapacity = Type.Partial(Type.Object(NodeCapacity.properties));

export const ClusterNode = Type.Object({
  id: Type.String(), name: Type.String(), url: Type.String(), status: NodeStatus,
  last_heartbeat: Type.String({ description: 'ISO-8601 timestamp, or `never` for a node loaded at start that has not heartbeat since' }),
  registered_at: Type.String(), capacity: NodeCapacity, labels: Labels, cell_ids: CellIds,
}, { $id: 'ClusterNode' });
export type ClusterNode = Static<typeof ClusterNode>;

export const NodeRegisterRequest = Type.Object({
  name: Type.Optional(Str({ maxLength: 253, description: 'Node name (workers send their host name)' })),
  url: Type.Optional(Str({ description: 'The node\'s base URL; a registration with the same non-blank name and url updates that node' })),
  capacity: Type.Optional(PartialCapacity),
  labels: Type.Optional(Labels),
  cell_ids: Type.Optional(CellIds),
  public_key: Type.Optional(Type.String({ pattern: PUBLIC_KEY, description: 'Ed25519 public key (base64) that signs the node\'s claim receipts' })),
}, { $id: 'NodeRegisterRequest' });
export type NodeRegisterRequest = Static<typeof NodeRegisterRequest>;

export const NodeRegistration = Type.Object({
  ...ClusterNode.properties,
  auth_token: Type.String({ description: 'Node token (scopes node:register, node:heartbeat) for heartbeats and the task API' }),
}, { $id: 'NodeRegistration' });

export const HeartbeatRequest = Type.Object({
  available_slots: Count('Free agent slots now'),
  active_agents: Count('Agents running now'),
  capacity: Type.Optional(PartialCapacity),
  labels: Type.Optional(Labels),
}, { $id: 'HeartbeatRequest' });
export type HeartbeatRequest = Static<typeof HeartbeatRequest>;

export const KillRequest = Type.Object({
  session_id: Type.String(), requested_by: Type.String({ description: 'Who asked (POST /agents/{session_id}/kill)' }),
});
export type KillRequest = Static<typeof KillRequest>;
/** The heartbeat's answer: the node, and the agents of this node someone asked to kill (the node stops them as the local orchestrator does). */
export const HeartbeatResponse = Type.Composite([ClusterNode, Type.Object({
  kill_sessions: Type.Array(KillRequest),
  state_head: Type.Union([Type.String({ description: 'The commit refs/sdd/state names (null: none yet): a worker mirrors the board when it moved' }), Type.Null()]),
})], { $id: 'HeartbeatResponse' });

export const NodeIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export const NodeActionResponse = Type.Object({
  status: Type.String({ description: 'cordoned, uncordoned or draining' }), node_id: Type.String(), node: ClusterNode,
}, { $id: 'NodeActionResponse' });

export const NodeListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('online'), Type.Literal('cordoned'), Type.Literal('draining'), Type.Literal('offline')], { description: 'Lowercase filter' })),
});

export const ClusterStatus = Type.Object({
  topology: Type.String(), total_nodes: Type.Integer(), online_nodes: Type.Integer(), offline_nodes: Type.Integer(),
  cordoned_nodes: Type.Integer(), draining_nodes: Type.Integer(),
  total_capacity: Type.Integer({ description: 'max_agents summed over online nodes' }),
  available_slots: Type.Integer({ description: 'Summed over online nodes' }),
  active_agents: Type.Integer({ description: 'Summed over nodes that are not offline' }),
  nodes: Type.Array(ClusterNode),
  claimed: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Task ids each node holds (claimed or in progress), offline nodes included' }),
}, { $id: 'ClusterStatus' });
export type ClusterStatus = Static<typeof ClusterStatus>;

export const StealRequest = Type.Object({
  queue_depths: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Integer({ minimum: 0, maximum: 1_000_000 }), {
    maxProperties: 10_000, description: 'Node id → queued tasks; a node left out (or no map) counts its claimed, not started tasks',
  })),
}, { $id: 'StealRequest' });
export const StealAction = Type.Object({ donor: Type.String(), receiver: Type.String(), task_ids: Type.Array(Type.String()) });
export const StealResponse = Type.Object({ actions: Type.Array(StealAction), total: Type.Integer() }, { $id: 'StealResponse' });
export type StealResponse = Static<typeof StealResponse>;

export const ClaimReceipt = Type.Object({
  kind: Str({ minLength: 1, maxLength: 32, description: 'claim, release, renew, expire, supersede (fork receipts are written by the server)' }),
  node_id: Type.String({ pattern: '^[0-9a-f]{12}$', description: 'The registered node whose key signed it' }),
  prev_entry_hash: Type.String({ pattern: ENTRY_HASH }),
  entry_hash: Type.String({ pattern: ENTRY_HASH, description: 'sha256: + hex SHA-256 of the RFC 8785 JSON of the receipt without signature and entry_hash' }),
  signature: Type.String({ pattern: '^[A-Za-z0-9+/]{86}==$', description: 'Ed25519 over the 32 digest bytes, base64' }),
}, { $id: 'ClaimReceipt', additionalProperties: true });
export type ClaimReceipt = Static<typeof ClaimReceipt> & Record<string, unknown>;

export const GossipRequest = Type.Object({
  receipts: Type.Array(ClaimReceipt, { maxItems: 1000 }),
  head: Type.Optional(Type.String({ maxLength: 80 })),
  node_id: Type.Optional(Type.String({ maxLength: 64 })),
}, { $id: 'GossipRequest' });
export const GossipStatus = Type.Union([Type.Literal('applied'), Type.Literal('duplicate'), Type.Literal('forked'), Type.Literal('rejected')]);
export const GossipResult = Type.Object({ entry_hash: Type.String(), status: GossipStatus, reason: Type.Union([Type.String(), Type.Null()]) });
export type GossipResult = Static<typeof GossipResult>;
export const GossipResponse = Type.Object({
  head: Type.String(), accepted: Type.Integer(), results: Type.Array(GossipResult), forked: Type.Boolean(),
}, { $id: 'GossipResponse' });

export const RevokeRequest = Type.Object({
  jti: Type.Optional(Str({ minLength: 1, maxLength: 200, description: 'Revoke the token with this id' })),
  node_id: Type.Optional(Str({ minLength: 1, maxLength: 64, description: 'Revoke every token of this node issued up to now' })),
}, { $id: 'RevokeRequest' });
export const RevokeResponse = Type.Object({
  jti: Type.Union([Type.String(), Type.Null()]), node_id: Type.Union([Type.String(), Type.Null()]),
}, { $id: 'RevokeResponse' });
