import { defineCommand } from 'citty';

// Each subcommand is imported only when it runs: `svc cluster nodes` never loads the compliance rules.
/** `svc cluster …`: the cluster of a task server, node tokens, claim receipts and workload governance. */
export const clusterCommand = defineCommand({
  meta: { name: 'cluster', description: 'Cluster nodes, node tokens and workload governance' },
  subCommands: {
    status: () => import('./cluster-remote.ts').then((m) => m.clusterStatusCommand),
    nodes: () => import('./cluster-remote.ts').then((m) => m.clusterNodesCommand),
    token: () => import('./cluster-token.ts').then((m) => m.clusterTokenCommand),
    claims: () => import('./cluster-claims.ts').then((m) => m.claimsCommand),
    'govern-inventory': () => import('./cluster-inventory.ts').then((m) => m.governInventoryCommand),
  },
});
