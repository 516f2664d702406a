// How `svc cluster status` and `svc cluster nodes` print for people (pure).
import type { ClusterNode, ClusterStatus } from '../cluster/index.ts';
import { table } from './table.ts';

/** A heartbeat's age: `never`, `42s`, `3m 10s`, `2h 5m`, `3d 4h`. */
export function heartbeatAge(lastHeartbeat: string, now: number): string {
  const t = Date.parse(lastHeartbeat);
  if (lastHeartbeat === 'never' || !Number.isFinite(t)) return 'never';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor(s / 3600) % 24}h`;
}

/** The node table, or `No nodes registered.` */
export function nodesTable(nodes: readonly ClusterNode[], now: number): string {
  if (!nodes.length) return 'No nodes registered.';
  const rows = nodes.map((n) => ({
    id: n.id, name: n.name, status: n.status.toLowerCase(), slots: `${n.capacity.available_slots}/${n.capacity.max_agents}`,
    agents: n.capacity.active_agents, heartbeat: heartbeatAge(n.last_heartbeat, now), url: n.url,
    labels: Object.entries(n.labels).map(([k, v]) => `${k}=${v}`).join(','),
  }));
  return table(rows, ['id', 'name', 'status', 'slots', 'agents', 'heartbeat', 'url', 'labels']);
}

/** The summary lines, the node table and the tasks each node holds. */
export function statusText(s: ClusterStatus, now: number): string {
  const lines = [
    `Topology: ${s.topology}`,
    `Nodes: ${s.total_nodes} total, ${s.online_nodes} online, ${s.cordoned_nodes} cordoned, ${s.draining_nodes} draining, ${s.offline_nodes} offline`,
    `Capacity: ${s.total_capacity} agents on online nodes, ${s.available_slots} free slots, ${s.active_agents} agents active`,
    '',
    nodesTable(s.nodes, now),
  ];
  const held = Object.entries(s.claimed);
  if (held.length) {
    lines.push('', 'Tasks held by nodes (claimed or in progress):');
    for (const [node, ids] of held) lines.push(`  ${node}: ${ids.join(', ')}`);
  }
  return lines.join('\n');
}
