// ClusterService: the node registry in memory, written to .sdd/cluster/nodes.json when a reviewer would care.
import type { Clock } from '../lib/clock.ts';
import { conflict, forbidden, notFound } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import type { Principal } from '../lib/route.ts';
import type { RecordStore } from '../store/types.ts';
import type { ClusterMetrics } from './metrics.ts';
import { claimRefusal, heartbeat, operate, registered, sameNode, staleIds, statusOf, type NodeEntry, type OperatorEvent } from './registry.ts';
import { NODE_ID, type ClusterNode, type ClusterStatus, type HeartbeatRequest, type KillRequest, type NodeRegisterRequest } from './schema.ts';
import type { ClusterTasks } from './tasks.ts';
import { NODE_DEFAULT_SCOPES, type NodeTokens } from './tokens.ts';
import { clusterStatus, loadedEntries, nodeRecord, persistedNode, registryFile } from './view.ts';

/** What the audit log is told about the cluster. */
export interface ClusterAudit {
  append(entry: { actor: string; action: string; resource_type: string; resource_id: string | null; details?: Record<string, unknown> }): Promise<unknown>;
}

export interface ClusterServiceDeps {
  store: RecordStore;
  /** `.sdd/cluster/nodes.json`. */
  file: string;
  clock: Clock;
  log: Logger;
  audit: ClusterAudit;
  metrics: ClusterMetrics;
  tokens: NodeTokens;
  tasks: ClusterTasks;
  /** 12 hex characters. */
  newId: () => string;
  /** node_timeout_s. */
  nodeTimeoutS: number;
  /** Who asked to kill session `sid` (its kill file), or null; none when the server runs no agents domain. */
  killRequested?: (sid: string) => Promise<string | null>;
}

const DONE_WORD: Record<OperatorEvent, string> = { cordon: 'cordoned', uncordon: 'uncordoned', drain: 'draining' };

/** Registers, heartbeats and operates nodes; every change an operator would review is persisted and audited. */
export class ClusterService {
  private nodes = new Map<string, NodeEntry>();
  private version = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(readonly deps: ClusterServiceDeps) {}

  /** Read the registry file: every node starts OFFLINE with no heartbeat. Returns the number loaded. */
  async load(): Promise<number> {
    const file = await this.deps.store.readJson<{ version?: number }>(this.deps.file).catch((err: Error) => {
      this.deps.log.warn(`ignoring unreadable ${this.deps.file}: ${err.message}`);
      return undefined;
    });
    this.version = Number.isInteger(file?.version) ? file!.version! : 0;
    for (const e of loadedEntries(file)) this.nodes.set(e.id, e);
    return this.nodes.size;
  }

  /** Every node, in registration order. */
  entries(): NodeEntry[] { return [...this.nodes.values()]; }
  /** One node, or undefined. */
  get(id: string): NodeEntry | undefined { return this.nodes.get(id); }

  /** Register (or update the node of the same name and url, or the node a node token speaks for) and issue its token. */
  async register(body: NodeRegisterRequest, who: Principal): Promise<ClusterNode & { auth_token: string }> {
    const existing = who.nodeId ? this.nodes.get(who.nodeId) : sameNode(this.nodes.values(), body.name, body.url);
    const id = existing?.id ?? who.nodeId ?? this.freshId();
    const entry = registered(existing, body, this.deps.clock.now(), id);
    this.nodes.set(id, entry);
    await this.persist(`${existing ? 're-register' : 'register'} node ${id}`);
    const issued = await this.deps.tokens.issue(id, NODE_DEFAULT_SCOPES);
    await this.audit(who, existing ? 'cluster.node.reregister' : 'cluster.node.register', id, { name: entry.name, url: entry.url, max_agents: entry.capacity.max_agents });
    await this.deps.audit.append({ actor: who.actor, action: 'cluster.token.issue', resource_type: 'cluster_token', resource_id: issued.jti, details: { node_id: id, scopes: [...NODE_DEFAULT_SCOPES], exp: issued.exp } });
    return { ...nodeRecord(entry), auth_token: issued.token };
  }

  /** A heartbeat: 403 for another node's token, 404 for a node the registry does not hold (the worker re-registers). */
  async heartbeat(id: string, body: HeartbeatRequest, who: Principal): Promise<ClusterNode> {
    if (who.nodeId && who.nodeId !== id) throw forbidden(`Token for node '${who.nodeId}' cannot act for node '${String(id).slice(0, 64)}'`);
    const e = this.known(id, 'not registered');
    const next = heartbeat(e, body, this.deps.clock.now());
    this.nodes.set(id, next);
    this.deps.metrics.heartbeat();
    if (!e.alive) await this.audit(who, 'cluster.node.online', id, { status: statusOf(next) });
    if (JSON.stringify(persistedNode(e)) !== JSON.stringify(persistedNode(next))) await this.persist(`node ${id} capacity`);
    return nodeRecord(next);
  }

  /** Kill requests for the agents of tasks node `id` holds (sent with its heartbeat answer). */
  async killRequests(id: string): Promise<KillRequest[]> {
    const ask = this.deps.killRequested;
    if (!ask) return [];
    const out: KillRequest[] = [];
    for (const t of this.deps.tasks.heldByNode().get(id) ?? []) {
      const by = t.session ? await ask(t.session) : null;
      if (by !== null) out.push({ session_id: t.session!, requested_by: by });
    }
    return out;
  }

  /** Cordon, uncordon or drain (the setting table; 409 for a pair it refuses). */
  async operate(id: string, event: OperatorEvent, who: Principal): Promise<{ status: string; node_id: string; node: ClusterNode }> {
    const e = this.known(id, 'not found');
    const out = operate(e, event);
    if ('refused' in out) throw conflict(out.refused);
    this.nodes.set(id, out.node);
    if (out.node.setting !== e.setting) {
      await this.persist(`${event} node ${id}`);
      await this.audit(who, `cluster.node.${event}`, id, { from: e.setting, to: out.node.setting });
    }
    return { status: DONE_WORD[event], node_id: id, node: nodeRecord(out.node) };
  }

  /** Unregister; the node's claimed, not started tasks go back to open (it can never start them). Returns their ids. */
  async remove(id: string, who: Principal): Promise<string[]> {
    this.known(id, 'not found');
    this.nodes.delete(id);
    await this.persist(`remove node ${id}`);
    const returned: string[] = [];
    for (const t of this.deps.tasks.heldByNode().get(id) ?? []) {
      if (t.status === 'claimed' && (await this.deps.tasks.returnToOpen(t.id, id, `node ${id} was removed`))) returned.push(t.id);
    }
    await this.audit(who, 'cluster.node.remove', id, { returned_tasks: returned });
    return returned;
  }

  /** Nodes, optionally of one status (lowercase filter). */
  list(status?: string): ClusterNode[] {
    return this.entries().filter((e) => !status || statusOf(e).toLowerCase() === status).map(nodeRecord);
  }

  /** GET /cluster/status, with the tasks each node holds. */
  status(): ClusterStatus {
    const held = new Map([...this.deps.tasks.heldByNode()].map(([node, tasks]) => [node, tasks.map((t) => t.id)]));
    return clusterStatus(this.entries(), held);
  }

  /** Mark offline every node whose last heartbeat is node_timeout_s old; their claimed tasks stay claimed. */
  async sweep(): Promise<string[]> {
    const stale = staleIds(this.nodes.values(), this.deps.clock.now(), this.deps.nodeTimeoutS * 1000);
    const audits = stale.map((id) => {
      const e = this.nodes.get(id)!;
      this.nodes.set(id, { ...e, alive: false });
      this.deps.log.warn(`node ${id} (${e.name || 'unnamed'}) is offline: no heartbeat for ${this.deps.nodeTimeoutS} s`);
      return this.audit({ actor: 'svc' }, 'cluster.node.offline', id, { last_heartbeat: new Date(e.lastHeartbeat!).toISOString() });
    });
    // Appended together, so a mass outage shares the audit log's datasyncs instead of paying one per node.
    await Promise.all(audits);
    return stale;
  }

  /** Why a node may not claim now, or null (the task service asks before every claim of a node token). */
  claimRefusal(nodeId: string): string | null { return claimRefusal(this.nodes.get(nodeId), nodeId); }

  // The node, or the 404 of INTERFACE.md (a malformed id is simply not a node).
  private known(id: string, how: 'not found' | 'not registered'): NodeEntry {
    const e = NODE_ID.test(id) ? this.nodes.get(id) : undefined;
    if (!e) throw notFound(`Node '${String(id).slice(0, 64)}' ${how}`);
    return e;
  }

  private freshId(): string {
    for (;;) {
      const id = this.deps.newId();
      if (!this.nodes.has(id)) return id;
    }
  }

  // Writes run one after another, each with the registry as it is when it runs.
  private persist(note: string): Promise<void> {
    const run = this.saving.then(() => this.deps.store.writeJson(this.deps.file, registryFile(this.nodes.values(), ++this.version), note));
    this.saving = run.catch(() => undefined);
    return run;
  }

  private audit(who: Pick<Principal, 'actor'>, action: string, id: string, details: Record<string, unknown>): Promise<unknown> {
    return this.deps.audit.append({ actor: who.actor, action, resource_type: 'cluster_node', resource_id: id, details });
  }
}
