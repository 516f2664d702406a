// How nodes look from outside (pure): the API record, the committed registry file, the cluster status.
import { join } from 'node:path';
import type { SddLayout } from '../store/layout.ts';
import { DEFAULT_CAPACITY, statusOf, type NodeEntry, type Setting } from './registry.ts';
import type { ClusterNode, ClusterStatus, NodeStatus } from './schema.ts';

/** Paths of the cluster's committed files. */
export const clusterFiles = (layout: Pick<SddLayout, 'clusterDir'>) => ({
  nodes: join(layout.clusterDir, 'nodes.json'),
  journal: join(layout.clusterDir, 'claim_journal.jsonl'),
});

const iso = (ms: number): string => new Date(ms).toISOString();

/** The node record of INTERFACE.md (status uppercase, `never` before a first heartbeat since start). */
export function nodeRecord(e: NodeEntry): ClusterNode {
  return {
    id: e.id, name: e.name, url: e.url, status: statusOf(e),
    last_heartbeat: e.lastHeartbeat === null ? 'never' : iso(e.lastHeartbeat),
    registered_at: iso(e.registeredAt), capacity: { ...e.capacity, supported_models: [...e.capacity.supported_models] },
    labels: { ...e.labels }, cell_ids: [...e.cellIds],
  };
}

/** One node in `.sdd/cluster/nodes.json`: what a reviewer cares about, nothing that changes per heartbeat. */
export interface PersistedNode {
  id: string;
  name: string;
  url: string;
  /** The operator's setting (ONLINE, CORDONED, DRAINING); liveness is never written. */
  status: Setting;
  registered_at: string;
  capacity: { max_agents: number; gpu_available: boolean; supported_models: string[] };
  labels: Record<string, string>;
  cell_ids: string[];
  public_key: string | null;
}
export interface RegistryFile {
  version: number;
  nodes: PersistedNode[];
}

/** A node as it is written to the registry file. */
export function persistedNode(e: NodeEntry): PersistedNode {
  const { max_agents, gpu_available, supported_models } = e.capacity;
  return {
    id: e.id, name: e.name, url: e.url, status: e.setting, registered_at: iso(e.registeredAt),
    capacity: { max_agents, gpu_available, supported_models: [...supported_models] },
    labels: e.labels, cell_ids: e.cellIds, public_key: e.publicKey,
  };
}

/** The registry file of these nodes (registration order). */
export function registryFile(entries: Iterable<NodeEntry>, version: number): RegistryFile {
  return { version, nodes: [...entries].map(persistedNode) };
}

const SETTINGS: readonly string[] = ['ONLINE', 'CORDONED', 'DRAINING'];

/** Nodes read back at start: OFFLINE with no heartbeat and no free slots until they heartbeat; bad entries skipped. */
export function loadedEntries(file: unknown): NodeEntry[] {
  const nodes = (file as Partial<RegistryFile> | undefined)?.nodes;
  if (!Array.isArray(nodes)) return [];
  return nodes.filter((n): n is PersistedNode => typeof n?.id === 'string' && /^[0-9a-f]{12}$/.test(n.id)).map((n) => ({
    id: n.id, name: String(n.name ?? ''), url: String(n.url ?? ''),
    setting: SETTINGS.includes(n.status) ? n.status : 'ONLINE',
    alive: false, lastHeartbeat: null,
    registeredAt: Number.isFinite(Date.parse(n.registered_at)) ? Date.parse(n.registered_at) : 0,
    capacity: { ...DEFAULT_CAPACITY, ...n.capacity, available_slots: 0, active_agents: 0 },
    labels: n.labels ?? {}, cellIds: n.cell_ids ?? [], publicKey: n.public_key ?? null,
  }));
}

/** Nodes per status, lowercase (the /metrics gauge and the status counts). */
export function countByStatus(entries: Iterable<NodeEntry>): Record<Lowercase<NodeStatus>, number> {
  const out = { online: 0, cordoned: 0, draining: 0, offline: 0 };
  for (const e of entries) out[statusOf(e).toLowerCase() as Lowercase<NodeStatus>] += 1;
  return out;
}

/** GET /cluster/status: counts, capacity of the nodes that take work, and every node's held tasks. */
export function clusterStatus(entries: readonly NodeEntry[], held: ReadonlyMap<string, readonly string[]>, topology = 'star'): ClusterStatus {
  const counts = countByStatus(entries);
  let totalCapacity = 0, slots = 0, active = 0;
  for (const e of entries) {
    const status = statusOf(e);
    if (status === 'ONLINE') { totalCapacity += e.capacity.max_agents; slots += e.capacity.available_slots; }
    if (status !== 'OFFLINE') active += e.capacity.active_agents;
  }
  const claimed: Record<string, string[]> = {};
  for (const [node, ids] of held) if (ids.length) claimed[node] = [...ids];
  return {
    topology, total_nodes: entries.length, online_nodes: counts.online, offline_nodes: counts.offline,
    cordoned_nodes: counts.cordoned, draining_nodes: counts.draining,
    total_capacity: totalCapacity, available_slots: slots, active_agents: active,
    nodes: entries.map(nodeRecord), claimed,
  };
}
