// The /cluster/nodes routes and GET /cluster/status (INTERFACE.md Cluster (HTTP)); scopes on the records.
import { Type, type TSchema } from '../lib/typebox.ts';
import { defineRoute, reply, type Route } from '../lib/route.ts';
import type { OperatorEvent } from './registry.ts';
import * as S from './schema.ts';
import type { ClusterService } from './service.ts';

const Err = Type.Object({ detail: Type.String() });
const E = (description: string) => ({ description, schema: Err });
const AUTH = { 401: E('Missing, invalid, expired or revoked token'), 403: E('The token lacks the scope, or speaks for another node') };
const ok = (description: string, schema: TSchema) => ({ 200: { description, schema } });

// POST /cluster/nodes/{id}/cordon, uncordon, drain.
function operatorRoute(svc: ClusterService, event: OperatorEvent, summary: string): Route {
  return defineRoute({
    method: 'POST', path: `/cluster/nodes/:id/${event}`, operationId: `${event}_node`, summary, tags: ['cluster'], access: 'task', nodeScope: 'node:admin',
    params: S.NodeIdParams, responses: { ...ok('The node after the change', S.NodeActionResponse), ...AUTH, 404: E('Node not found'), 409: E('Not allowed from the node\'s state') },
    handler: (ctx) => svc.operate(ctx.params.id, event, ctx.principal),
  });
}

/** Node registry routes. */
export function nodeRoutes(svc: ClusterService, stateHead?: () => Promise<string | null>): Route[] {
  return [
    defineRoute({
      method: 'POST', path: '/cluster/nodes', operationId: 'register_node', summary: 'Register a node (the same non-blank name and url update it) and get its token',
      tags: ['cluster'], access: 'task', nodeScope: 'node:register', body: S.NodeRegisterRequest, bodyOptional: true,
      responses: { 201: { description: 'The node and its token', schema: S.NodeRegistration }, ...AUTH },
      handler: async (ctx) => reply(201, await svc.register(ctx.body ?? {}, ctx.principal)),
    }),
    defineRoute({
      method: 'POST', path: '/cluster/nodes/:id/heartbeat', operationId: 'node_heartbeat', summary: 'Report free slots and active agents; brings an offline node back; the answer lists agents to kill and names the state commit',
      tags: ['cluster'], access: 'task', nodeScope: 'node:heartbeat', params: S.NodeIdParams, body: S.HeartbeatRequest,
      responses: { ...ok('The node, and kill requests for its agents', S.HeartbeatResponse), ...AUTH, 404: E('Node not registered (evicted): register again') },
      handler: async (ctx) => ({
        ...(await svc.heartbeat(ctx.params.id, ctx.body, ctx.principal)), kill_sessions: await svc.killRequests(ctx.params.id), state_head: stateHead ? await stateHead() : null,
      }),
    }),
    operatorRoute(svc, 'cordon', 'Cordon a node: it keeps heartbeating and gets no new tasks'),
    operatorRoute(svc, 'uncordon', 'Put a cordoned or draining node back to work'),
    operatorRoute(svc, 'drain', 'Drain a node: its agents finish, no new tasks'),
    defineRoute({
      method: 'DELETE', path: '/cluster/nodes/:id', operationId: 'unregister_node', summary: 'Unregister a node (workers do on SIGINT and SIGTERM); its claimed, not started tasks go back to open',
      tags: ['cluster'], access: 'task', nodeScope: 'node:admin', params: S.NodeIdParams,
      responses: { 204: { description: 'Removed' }, ...AUTH, 404: E('Node not found') },
      handler: async (ctx) => { await svc.remove(ctx.params.id, ctx.principal); return undefined; },
    }),
    defineRoute({
      method: 'GET', path: '/cluster/nodes', operationId: 'list_nodes', summary: 'Registered nodes, optionally of one status', tags: ['cluster'], access: 'read',
      query: S.NodeListQuery, responses: { ...ok('Nodes in registration order', Type.Array(S.ClusterNode)), 401: E('Missing or invalid token') },
      handler: (ctx) => svc.list(ctx.query.status),
    }),
    defineRoute({
      method: 'GET', path: '/cluster/status', operationId: 'cluster_status', summary: 'Counts, capacity, every node and the tasks each holds', tags: ['cluster'], access: 'read',
      responses: { ...ok('The cluster', S.ClusterStatus), 401: E('Missing or invalid token') },
      handler: () => svc.status(),
    }),
  ];
}
