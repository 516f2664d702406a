import type { IncomingMessage } from 'node:http';
import { Type } from '../lib/typebox.ts';
import type { Clock } from '../lib/clock.ts';
import { forbidden } from '../lib/http-error.ts';
import { defineRoute, RAW, reply, type Principal, type Route } from '../lib/route.ts';
import { docsRoutes } from './docs.ts';
import type { HttpMetrics } from './metrics.ts';

/** What the process tells the server about itself. */
export interface ServerHooks {
  /** True once draining started (POST /drain, SIGTERM): readiness answers 503. */
  isDraining(): boolean;
  /** Extra members of GET /health (agents running, pending commits, …), shown to unbound admin and operator tokens only. */
  health(): Record<string, unknown>;
}

export interface SystemDeps {
  version: string;
  metrics: HttpMetrics;
  hooks?: ServerHooks;
  clock: Clock;
  /** The OpenAPI document (built once by the app). */
  openapi: () => unknown;
}

const Str = Type.String();
const RootInfo = Type.Object({ name: Str, version: Str, docs: Str, openapi: Str }, { $id: 'RootInfo' });
const Health = Type.Object({ status: Str, version: Str, uptime_s: Type.Number() }, { $id: 'Health', additionalProperties: true });
const Status = Type.Object({ status: Str }, { $id: 'ProbeStatus' });
const NotReady = Type.Object({ detail: Str, status: Type.Literal('not_ready') }, { $id: 'NotReady' });
const AgentCard = Type.Object({
  name: Str, description: Str, version: Str, url: Str, protocolVersion: Str,
  capabilities: Type.Record(Str, Type.Boolean()), skills: Type.Array(Type.Object({ id: Str, name: Str, description: Str }, { additionalProperties: true })),
  defaultInputModes: Type.Array(Str), defaultOutputModes: Type.Array(Str),
}, { $id: 'AgentCard', additionalProperties: true });

const SKILLS = [
  { id: 'create-task', name: 'Create tasks', description: 'Create tasks (single or batch) for AI coding agents', tags: ['tasks'] },
  { id: 'claim-task', name: 'Claim work', description: 'Claim the next open task of a role, exactly one claimer wins', tags: ['tasks', 'agents'] },
  { id: 'report-progress', name: 'Report progress and complete', description: 'Report progress, complete, fail or release a claimed task', tags: ['tasks'] },
  { id: 'task-board', name: 'Read the board', description: 'List, search and count tasks; state history lives in git (refs/sdd/state)', tags: ['tasks'] },
];

/** An A2A-style agent card; `url` is the address the client reached us at. */
export function agentCard(version: string, req: IncomingMessage): Record<string, unknown> {
  const host = req.headers.host ?? 'localhost';
  return {
    name: 'svc', description: 'Git-native governance layer for AI coding agents: a JSON task server whose state lives in git',
    version, url: `http://${host}/`, protocolVersion: '0.2.5',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    defaultInputModes: ['application/json'], defaultOutputModes: ['application/json', 'text/event-stream'],
    skills: SKILLS,
    authentication: { schemes: ['bearer'] },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, security: [{ bearer: [] }],
  };
}

/** Totals across tenants are for admin and operator tokens bound to no tenant (and for a server without authentication). */
export function seesTotals(p: Principal): boolean {
  return p.tenant === null && (p.role === 'admin' || p.role === 'operator') && p.kind !== 'anonymous';
}

const get = (path: string, operationId: string, summary: string, access: Route['access'], responses: Route['responses'], handler: Route['handler']) =>
  defineRoute({ method: 'GET', path, operationId, summary, tags: ['system'], access, responses, handler });

/** /, health and readiness probes, agent card, OpenAPI, docs and metrics. */
export function systemRoutes(deps: SystemDeps): Route[] {
  const started = deps.clock.now();
  const draining = () => deps.hooks?.isDraining() ?? false;
  const ready = () => (draining() ? reply(503, { detail: 'draining', status: 'not_ready' }) : { status: 'ready' });
  const readyDocs = { 200: { description: 'Ready', schema: Status }, 503: { description: 'Draining', schema: NotReady } };
  const alive = { 200: { description: 'Process alive', schema: Status } };
  return [
    get('/', 'root', 'Service name, version and where the docs are', 'read', { 200: { description: 'Service info', schema: RootInfo } },
      () => ({ name: 'svc', version: deps.version, docs: '/docs', openapi: '/openapi.json' })),
    get('/health', 'health', 'Health summary (details such as task totals for admin and operator tokens)', 'public', { 200: { description: 'Health', schema: Health } },
      ({ principal }) => ({ status: draining() ? 'draining' : 'ok', version: deps.version,
        uptime_s: Math.round((deps.clock.now() - started) / 100) / 10, ...(seesTotals(principal) ? deps.hooks?.health() ?? {} : {}) })),
    get('/health/ready', 'health_ready', 'Readiness (503 while draining)', 'public', readyDocs, ready),
    get('/ready', 'ready', 'Readiness (503 while draining)', 'public', readyDocs, ready),
    get('/health/live', 'health_live', 'Liveness', 'public', alive, () => ({ status: 'alive' })),
    get('/alive', 'alive', 'Liveness', 'public', alive, () => ({ status: 'alive' })),
    get('/.well-known/agent.json', 'agent_card', 'A2A agent card', 'public', { 200: { description: 'Agent card', schema: AgentCard } },
      ({ req }) => agentCard(deps.version, req)),
    get('/openapi.json', 'openapi', 'This OpenAPI 3.1 document', 'public',
      { 200: { description: 'OpenAPI document', schema: Type.Object({}, { additionalProperties: true }) } }, () => deps.openapi()),
    get('/metrics', 'metrics', 'Prometheus metrics of every tenant (text exposition format; unbound admin or operator tokens)', 'operate',
      { 200: { description: 'Metrics', contentType: 'text/plain; version=0.0.4', schema: Str }, 403: { description: 'Not an unbound admin or operator token', schema: Type.Object({ detail: Str }) } },
      async ({ res, principal }) => {
        if (!seesTotals(principal)) throw forbidden('metrics cover every tenant: an admin or operator token not bound to a tenant is required');
        const text = await deps.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': deps.metrics.registry.contentType }).end(text);
        return RAW;
      }),
    ...docsRoutes(),
  ];
}
