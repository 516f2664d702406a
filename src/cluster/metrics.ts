// The cluster's series on the server's /metrics registry.
import { Counter, Gauge, Registry } from 'prom-client';

/** Where the cluster counts what it did. */
export interface ClusterMetrics {
  heartbeat(): void;
  /** Tasks a steal moved back to open. */
  stolen(tasks: number): void;
  /** A node's write on a task it no longer holds was refused (409). */
  fenced(): void;
  gossip(status: string): void;
}

/** Counters and the per-status node gauge, registered on `registry` (a private one when none is given, e.g. in tests). */
export function clusterMetrics(nodesByStatus: () => Record<string, number>, registry: Registry = new Registry()): ClusterMetrics {
  new Gauge({
    name: 'svc_cluster_nodes', help: 'Registered cluster nodes by status (online, cordoned, draining, offline)', labelNames: ['status'], registers: [registry],
    collect() {
      this.reset();
      for (const [status, n] of Object.entries(nodesByStatus())) this.set({ status }, n);
    },
  });
  const heartbeats = new Counter({ name: 'svc_cluster_heartbeats_total', help: 'Node heartbeats accepted', registers: [registry] });
  const stolen = new Counter({ name: 'svc_cluster_stolen_tasks_total', help: 'Claimed tasks a steal gave back to open', registers: [registry] });
  const fenced = new Counter({ name: 'svc_cluster_fenced_writes_total', help: 'Completions and other writes refused because the node no longer holds the task', registers: [registry] });
  const gossip = new Counter({ name: 'svc_cluster_gossip_receipts_total', help: 'Claim receipts received by gossip, by result (applied, duplicate, forked, rejected)', labelNames: ['result'], registers: [registry] });
  return {
    heartbeat: () => heartbeats.inc(),
    stolen: (n) => stolen.inc(n),
    fenced: () => fenced.inc(),
    gossip: (result) => gossip.inc({ result }),
  };
}
