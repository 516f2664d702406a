import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeFile, mkdir } from 'node:fs/promises';
import { Type } from '../lib/typebox.ts';
import { notFound } from '../lib/http-error.ts';
import { defineRoute, RAW, type Route, type RouteContext } from '../lib/route.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import type { RecordStore } from '../store/types.ts';
import type { Tasks } from '../tasks/index.ts';
import { streamJson } from '../lib/json-stream.ts';
import { LOG_TAIL_DEFAULT, LOG_TAIL_MAX, LogFollowers, logResponseJson, openLogWindow, streamStart } from '../runner/index.ts';
import type { Orchestrator } from './orchestrator.ts';
import { AgentMetrics, compareRuns, type RunRecord } from './runs.ts';
import { nodeHeldTask } from './remote.ts';
import { readOwner, sessionAccess } from './session-owner.ts';
import { AgentEntry, syntheticEntries, toAgentEntry } from './sessions.ts';

/** The part of an SSE response the stream route uses (src/server/sse.ts `openSse` returns one). */
export interface SseLike {
  send(id: string | number | null, event: string | null, data: unknown): void;
  onClose(fn: () => void): void;
}

/** What the agent routes read: the board, the `.sdd` tree, the orchestrator's sessions and an SSE opener. */
export interface AgentRouteDeps {
  svc: Tasks;
  layout: SddLayout;
  store: RecordStore;
  orchestrator: Pick<Orchestrator, 'sessions' | 'requestTick'>;
  openSse: (req: IncomingMessage, res: ServerResponse, opts?: { pingMs?: number; retryMs?: number }) => SseLike;
  /** Open log followers (one per stream); pass one in to observe them. */
  followers?: LogFollowers;
  pingMs?: number;
}

const ErrorBody = Type.Object({ detail: Type.String() });
const E = (description: string) => ({ description, schema: ErrorBody });
const SessionParams = Type.Object({ session_id: Type.String() });
const TenantQuery = Type.Object({ tenant: Type.Optional(Type.String()) });
const LogsQuery = Type.Object({
  tail_bytes: Type.Optional(Type.Integer({ minimum: 0, maximum: LOG_TAIL_MAX, default: 0, description: `Last N bytes, from a line start; 0 = the last ${LOG_TAIL_DEFAULT} bytes (at most ${LOG_TAIL_MAX})` })),
  tenant: Type.Optional(Type.String()),
});
const AgentLogsResponse = Type.Object({
  session_id: Type.String(), content: Type.String(), size: Type.Integer(), truncated: Type.Boolean({ description: 'The content does not start at the beginning of the log' }),
}, { $id: 'AgentLogsResponse' });
const AgentKillResponse = Type.Object({ session_id: Type.String(), kill_requested: Type.Boolean() }, { $id: 'AgentKillResponse' });

/** `GET /agents`, comparison, logs, kill and the live log stream. */
export function agentRoutes(deps: AgentRouteDeps): Route[] {
  const followers = deps.followers ?? new LogFollowers();
  // The session's owner: the live record, else the owner file kept with its log (retired, or --no-orchestrator).
  // Unknown, unnamable or another tenant's → 404; another task's for a task-scoped token → 403.
  const session = async (ctx: RouteContext<{ session_id: string }, unknown, unknown>): Promise<string> => {
    const raw = ctx.params.session_id;
    const tenant = ctx.who.tenant;
    if (!isValidId(raw)) throw notFound(`Session '${String(raw).slice(0, 100)}' not found`);
    const held = deps.orchestrator.sessions().find((s) => s.session_id === raw);
    // A cluster node's session: the task it holds for it (the agent runs there; a kill reaches it with its heartbeat).
    const remote = held ? undefined : nodeHeldTask(deps.svc, raw);
    const owner = held ? { session_id: raw, task_id: held.task_id, tenant: held.tenant } : remote ? { session_id: raw, task_id: remote.id, tenant: remote.tenant } : await readOwner(deps.layout, raw);
    sessionAccess(owner, raw, tenant, ctx.principal);
    return raw;
  };
  return [
    defineRoute({
      method: 'GET', path: '/agents', operationId: 'list_agents', summary: 'Agent sessions of the caller\'s tenant (synthetic entries from claimed tasks when none is live)', tags: ['agents'], access: 'read',
      query: TenantQuery, responses: { 200: { description: 'Sessions', schema: Type.Array(AgentEntry) } },
      handler: (ctx) => {
        const { tenant } = ctx.who;
        const live = deps.orchestrator.sessions().filter((s) => s.tenant === tenant).map(toAgentEntry);
        if (live.length) return live;
        const working = deps.svc.list({ tenant, status: ['claimed', 'in_progress'] });
        return syntheticEntries(working.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)));
      },
    }),
    defineRoute({
      method: 'GET', path: '/agents/comparison', operationId: 'compare_agents', summary: 'Run metrics per (adapter, model) of the caller\'s tenant, sorted by adapter then model', tags: ['agents'], access: 'read',
      query: TenantQuery, responses: { 200: { description: 'Agent metrics', schema: Type.Array(AgentMetrics) } },
      handler: async (ctx) => {
        const { tenant } = ctx.who;
        return compareRuns((await deps.store.readJsonl<RunRecord>(deps.layout.metricsRuns)).filter((r) => (r.tenant ?? 'default') === tenant));
      },
    }),
    defineRoute({
      method: 'GET', path: '/agents/:session_id/logs', operationId: 'agent_logs', heavy: true, summary: 'Log of a session (tail_bytes > 0: only the last bytes, from a line start)', tags: ['agents'], access: 'read', taskScope: 'session',
      params: SessionParams, query: LogsQuery,
      responses: { 200: { description: 'Log', schema: AgentLogsResponse }, 404: E('No log file for the session') },
      handler: async (ctx) => {
        const sid = await session(ctx);
        const w = await openLogWindow(deps.layout.log(sid), ctx.query.tail_bytes ?? 0);
        if (!w) throw notFound(`No log for session '${sid}'`);
        // Streamed a piece at a time: a client asking for a large log holds at most one piece in memory.
        await streamJson(ctx.res, 200, {}, logResponseJson(sid, w));
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/agents/:session_id/kill', operationId: 'kill_agent', summary: 'Ask the orchestrator to kill a session\'s agent on its next tick (a cluster node\'s agent: on the node\'s next heartbeat)', tags: ['agents'], access: 'operate',
      params: SessionParams, responses: { 200: { description: 'Kill requested', schema: AgentKillResponse } },
      handler: async (ctx) => {
        const sid = await session(ctx);
        await mkdir(deps.layout.signalsDir, { recursive: true });
        await writeFile(deps.layout.kill(sid), `${JSON.stringify({ requested_by: ctx.principal.actor })}\n`);
        deps.orchestrator.requestTick();
        return { session_id: sid, kill_requested: true };
      },
    }),
    defineRoute({
      method: 'GET', path: '/agents/:session_id/stream', operationId: 'stream_agent_logs', summary: 'Live log lines as server-sent events (id = byte offset; Last-Event-ID resumes)', tags: ['agents'], access: 'read', taskScope: 'session',
      params: SessionParams, responses: { 200: { description: 'text/event-stream of `event: log` frames', contentType: 'text/event-stream' } },
      handler: async (ctx) => {
        const sid = await session(ctx);
        const last = Number(ctx.req.headers['last-event-id']);
        const file = deps.layout.log(sid);
        const from = await streamStart(file, Number.isSafeInteger(last) && last > 0 ? last : 0);
        const sse = deps.openSse(ctx.req, ctx.res, { pingMs: deps.pingMs ?? 15_000, retryMs: 1000 });
        // A client that does not read pauses the follower instead of piling the log up in memory.
        const f = followers.follow(file, from, (line, end) => sse.send(end, 'log', { line }), { paused: () => ctx.res.writableNeedDrain });
        ctx.res.on('drain', () => f.resume());
        sse.onClose(() => f.close());
        return RAW;
      },
    }),
  ];
}
