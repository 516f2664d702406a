// POST /cluster/steal, /cluster/claims/gossip and /cluster/tokens/revoke: the cluster's operations not about one node.
import { Type } from '../lib/typebox.ts';
import { defineRoute, type Principal, type Route } from '../lib/route.ts';
import { unprocessable } from '../lib/http-error.ts';
import * as S from './schema.ts';
import type { ClaimJournal } from './journal.ts';
import type { ClusterAudit } from './service.ts';
import type { NodeTokens } from './tokens.ts';

const Err = Type.Object({ detail: Type.String() });
const E = (description: string) => ({ description, schema: Err });
const AUTH = { 401: E('Missing, invalid, expired or revoked token'), 403: E('The token lacks node:admin') };

/** Token revocation (in memory, audited). */
export function revokeRoute(deps: { tokens: NodeTokens; audit: ClusterAudit }): Route {
  return defineRoute({
    method: 'POST', path: '/cluster/tokens/revoke', operationId: 'revoke_node_tokens', summary: 'Revoke a node token by jti, or every token of a node issued up to now (kept in memory)',
    tags: ['cluster'], access: 'task', nodeScope: 'node:admin', body: S.RevokeRequest,
    responses: { 200: { description: 'What was revoked', schema: S.RevokeResponse }, ...AUTH },
    handler: async ({ body, principal }) => {
      if (!body.jti && !body.node_id) throw unprocessable('name a token (jti) or a node (node_id) to revoke');
      if (body.jti) deps.tokens.revokeJti(body.jti);
      if (body.node_id) deps.tokens.revokeNode(body.node_id);
      await deps.audit.append({
        actor: principal.actor, action: 'cluster.token.revoke', resource_type: 'cluster_token', resource_id: body.jti ?? null,
        details: { jti: body.jti ?? null, node_id: body.node_id ?? null },
      });
      return { jti: body.jti ?? null, node_id: body.node_id ?? null };
    },
  });
}

/** Work stealing: claimed, not started tasks of overloaded nodes go back to open for idle ones. */
export function stealRoute(steal: (depths: Readonly<Record<string, number>>, who: Principal) => Promise<S.StealResponse>): Route {
  return defineRoute({
    method: 'POST', path: '/cluster/steal', operationId: 'steal_tasks', summary: 'Give claimed, not started tasks of nodes over 5 queued back to open for nodes with 2 free slots (at most 3)',
    tags: ['cluster'], access: 'task', nodeScope: 'node:admin', body: S.StealRequest, bodyOptional: true,
    responses: { 200: { description: 'What moved', schema: S.StealResponse }, ...AUTH },
    handler: ({ body, principal }) => steal(body?.queue_depths ?? {}, principal),
  });
}

/** Claim gossip: receipts checked one by one (hash, the node's key, chain link) and appended to the journal. */
export function gossipRoute(journal: ClaimJournal): Route {
  return defineRoute({
    method: 'POST', path: '/cluster/claims/gossip', operationId: 'gossip_claims', summary: 'Push signed claim receipts: each is applied, a duplicate, a fork (the push stops) or rejected',
    tags: ['cluster'], access: 'task', nodeScope: 'node:heartbeat', body: S.GossipRequest,
    responses: { 200: { description: 'One result per receipt judged, and the journal head after', schema: S.GossipResponse }, 401: E('Missing, invalid, expired or revoked token'), 403: E('The token lacks node:heartbeat') },
    handler: ({ body, principal }) => journal.ingest(body.receipts as S.ClaimReceipt[], principal.actor),
  });
}
