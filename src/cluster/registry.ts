// The node registry's rules (pure): the state table, registration by (name, url), heartbeats, staleness.
import type { HeartbeatRequest, NodeCapacity, NodeRegisterRequest, NodeStatus } from './schema.ts';

/** What an operator set a node to; a node that stops heartbeating is OFFLINE whatever its setting. */
export type Setting = 'ONLINE' | 'CORDONED' | 'DRAINING';
export type OperatorEvent = 'cordon' | 'uncordon' | 'drain';

/**
 * The operator's events on a node's setting (INTERFACE.md node state table); a missing pair answers 409.
 * The setting survives an outage and a restart: a drained node that comes back is still draining.
 */
export const SETTING_TABLE = {
  ONLINE: { cordon: 'CORDONED', uncordon: 'ONLINE', drain: 'DRAINING' },
  CORDONED: { cordon: 'CORDONED', uncordon: 'ONLINE', drain: 'DRAINING' },
  DRAINING: { uncordon: 'ONLINE', drain: 'DRAINING' },
} as const satisfies Record<Setting, Partial<Record<OperatorEvent, Setting>>>;

/** One node as the server holds it. Times are milliseconds since the epoch. */
export interface NodeEntry {
  id: string;
  name: string;
  url: string;
  setting: Setting;
  /** False from start until the first heartbeat, and after the node went stale. */
  alive: boolean;
  /** null: no heartbeat since this server started ("never"). */
  lastHeartbeat: number | null;
  registeredAt: number;
  capacity: NodeCapacity;
  labels: Record<string, string>;
  cellIds: string[];
  /** Ed25519 key (base64) that signs the node's claim receipts. */
  publicKey: string | null;
}

/** The status of INTERFACE.md: the setting while the node heartbeats, else OFFLINE. */
export const statusOf = (e: Pick<NodeEntry, 'alive' | 'setting'>): NodeStatus => (e.alive ? e.setting : 'OFFLINE');

/** Capacity of a node that reported none: 6 agents, all free (the worker's default). */
export const DEFAULT_CAPACITY: NodeCapacity = { max_agents: 6, available_slots: 6, active_agents: 0, gpu_available: false, supported_models: [] };

/** The node a registration updates: same non-blank name and url (a blank one never matches). */
export function sameNode(entries: Iterable<NodeEntry>, name: string | undefined, url: string | undefined): NodeEntry | undefined {
  if (!name?.trim() || !url?.trim()) return undefined;
  for (const e of entries) if (e.name === name && e.url === url) return e;
  return undefined;
}

/**
 * A registration: a new node with `id`, or `existing` updated (name and url when given, capacity, labels and
 * cell ids when given, key when given); registered_at and the operator's setting are kept. Either way it is alive now.
 */
export function registered(existing: NodeEntry | undefined, body: NodeRegisterRequest, now: number, id: string): NodeEntry {
  const base = { ...DEFAULT_CAPACITY, ...(existing?.capacity ?? {}) };
  const capacity = { ...base, ...body.capacity };
  // A registration that names only max_agents has all of them free.
  if (body.capacity?.max_agents !== undefined && body.capacity.available_slots === undefined) capacity.available_slots = capacity.max_agents;
  return {
    id: existing?.id ?? id,
    name: body.name?.trim() ? body.name : (existing?.name ?? body.name ?? ''),
    url: body.url?.trim() ? body.url : (existing?.url ?? body.url ?? ''),
    setting: existing?.setting ?? 'ONLINE',
    alive: true,
    lastHeartbeat: now,
    registeredAt: existing?.registeredAt ?? now,
    capacity,
    labels: body.labels ?? existing?.labels ?? {},
    cellIds: body.cell_ids ?? existing?.cellIds ?? [],
    publicKey: body.public_key ?? existing?.publicKey ?? null,
  };
}

/** A heartbeat: alive now, with the slots and agents it reports (and capacity fields or labels when given). */
export function heartbeat(e: NodeEntry, body: HeartbeatRequest, now: number): NodeEntry {
  const capacity = { ...e.capacity, ...body.capacity, available_slots: body.available_slots, active_agents: body.active_agents };
  return { ...e, alive: true, lastHeartbeat: now, capacity, labels: body.labels ?? e.labels };
}

/** An operator's event: the node with its new setting, or why the table refuses it. */
export function operate(e: NodeEntry, event: OperatorEvent): { node: NodeEntry } | { refused: string } {
  const to = (SETTING_TABLE[e.setting] as Partial<Record<OperatorEvent, Setting>>)[event];
  if (!to) return { refused: `Cannot ${event} node '${e.id}' in state '${statusOf(e)}'` };
  return { node: { ...e, setting: to } };
}

/** Ids of nodes that heartbeat and whose last heartbeat is `timeoutMs` or more before `now`. */
export function staleIds(entries: Iterable<NodeEntry>, now: number, timeoutMs: number): string[] {
  const out: string[] = [];
  for (const e of entries) if (e.alive && e.lastHeartbeat !== null && now - e.lastHeartbeat >= timeoutMs) out.push(e.id);
  return out;
}

/** Why a node may not claim tasks now (unknown, cordoned, draining), or null. An offline node that calls is let through. */
export function claimRefusal(e: NodeEntry | undefined, id: string): string | null {
  if (!e) return `Node '${id}' is not registered: register again before claiming`;
  if (e.setting === 'CORDONED') return `Node '${id}' is cordoned: no new tasks are assigned to it`;
  if (e.setting === 'DRAINING') return `Node '${id}' is draining: no new tasks are assigned to it`;
  return null;
}
