// `svc cluster token`: a node token signed offline with this repository's cluster secret, as the server signs.
import { randomUUID } from 'node:crypto';
// The two files, not the domain's index: a CLI call should not load the server side of the cluster.
import { loadClusterSecret } from '../cluster/secret.ts';
import { NODE_ID } from '../cluster/schema.ts';
import { createNodeTokens, isScopeList, NODE_DEFAULT_SCOPES } from '../cluster/tokens.ts';
import { systemClock } from '../lib/clock.ts';
import { CliError, UsageError } from './args.ts';
import { auditOffline } from './audit.ts';
import { command } from './command.ts';
import { localLayout } from './offline.ts';

/** Signed with SERVICE_CLUSTER_SECRET, else `.sdd/secrets/cluster.secret`: run it where the server's secret is. */
export const clusterTokenCommand = command({ name: 'cluster token', description: 'Issue a node token (HS256 JWT with the cluster secret); printed once, audited' }, {
  node: { type: 'string', valueHint: 'id', description: 'Node id (12 hex characters) the token speaks for' },
  scopes: { type: 'string', valueHint: 'list', description: `Comma-separated: node:register, node:heartbeat, node:admin (default ${NODE_DEFAULT_SCOPES.join(',')})` },
  hours: { type: 'string', valueHint: 'n', description: 'Lifetime in hours (default 24)' },
}, async (c) => {
  const node = String(c.values.node ?? '');
  if (!NODE_ID.test(node)) throw new UsageError('--node must be a node id: 12 lowercase hex characters');
  const scopes = c.values.scopes === undefined ? [...NODE_DEFAULT_SCOPES] : [...new Set(String(c.values.scopes).split(',').map((s) => s.trim()).filter(Boolean))];
  if (!scopes.length || !isScopeList(scopes)) throw new UsageError('--scopes takes node:register, node:heartbeat and node:admin, comma-separated');
  const hours = c.values.hours === undefined ? 24 : Number(c.values.hours);
  if (!Number.isFinite(hours) || hours <= 0 || hours > 8760) throw new UsageError('--hours must be a number of hours above 0 and at most 8760');
  const layout = localLayout(c);
  let secret: string;
  try {
    secret = (await loadClusterSecret(layout, c.env.SERVICE_CLUSTER_SECRET || undefined)).secret;
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const issued = await createNodeTokens({ secret, clock: systemClock, newJti: () => randomUUID(), expiryHours: hours }).issue(node, scopes, hours);
  const expiresAt = new Date(issued.exp * 1000).toISOString();
  await auditOffline(layout, { actor: 'cli', action: 'cluster.token.issue', resource_type: 'cluster_token', resource_id: issued.jti, details: { node_id: node, scopes, exp: issued.exp } });
  if (c.values.json) return c.out(JSON.stringify({ token: issued.token, jti: issued.jti, node_id: node, scopes, expires_at: expiresAt }, null, 2));
  c.out(`${issued.token}\n(node ${node}, scopes ${scopes.join(',')}, jti ${issued.jti}, expires ${expiresAt}; shown once)`);
});
