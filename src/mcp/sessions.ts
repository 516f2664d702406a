// MCP sessions of /mcp: one SDK transport and server per session (initialize opens one, DELETE or an idle
// hour ends it), bound to the actor that opened it; every request is still authenticated on its own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../lib/clock.ts';
import type { Caller } from './board.ts';
import { createMcpServer, type ProtocolDeps } from './protocol.ts';
import { rpcError, type McpSessions } from './routes.ts';

export interface SessionDeps extends ProtocolDeps {
  clock: Clock;
  /** A new unguessable session id. */
  newId: () => string;
  /** A session unused this long is closed (default one hour). */
  idleMs?: number;
  /** Sessions at once in all (default 1000) and per actor (default 32: an actor's oldest goes first). */
  maxSessions?: number;
  maxPerActor?: number;
}

interface Entry {
  transport: StreamableHTTPServerTransport;
  actor: string;
  lastSeen: number;
  dispose(): void;
}


/** The session table; idle sessions are swept once a minute (the timer does not hold the process). */
export function createSessions(deps: SessionDeps): McpSessions {
  const idleMs = deps.idleMs ?? 3_600_000;
  const max = deps.maxSessions ?? 1000;
  const perActor = deps.maxPerActor ?? 32;
  const sessions = new Map<string, Entry>();
  const sweep = setInterval(() => {
    const old = deps.clock.now() - idleMs;
    for (const e of sessions.values()) if (e.lastSeen < old) void e.transport.close();
  }, 60_000);
  sweep.unref();

  // Room for one more session of `actor`: its oldest session goes when it has too many.
  const makeRoom = async (actor: string): Promise<boolean> => {
    const own = [...sessions.values()].filter((e) => e.actor === actor).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const e of own.slice(0, Math.max(0, own.length - perActor + 1))) await e.transport.close();
    return sessions.size < max;
  };

  const open = async (caller: Caller): Promise<StreamableHTTPServerTransport> => {
    const { server, dispose } = createMcpServer(deps);
    const actor = caller.principal.actor;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: deps.newId,
      enableJsonResponse: true,
      onsessioninitialized: (id) => { sessions.set(id, { transport, actor, lastSeen: deps.clock.now(), dispose }); },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id) sessions.delete(id);
      dispose();
    };
    await server.connect(transport);
    return transport;
  };

  return {
    async handle(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Caller) {
      // A client that hangs up mid-call (a long next_task) must not be handed a task nobody receives.
      const gone = new AbortController();
      res.once('close', () => { if (!res.writableFinished) gone.abort(); });
      Object.assign(req, { auth: { token: '', clientId: caller.principal.actor, scopes: [], extra: { caller, gone: gone.signal } } });
      const sid = req.headers['mcp-session-id'];
      if (typeof sid === 'string') {
        const e = sessions.get(sid);
        // Another actor's session is not found either: its id says nothing, and its stream stays its own.
        if (!e || e.actor !== caller.principal.actor) { rpcError(res, 404, -32001, 'Session not found'); return; }
        e.lastSeen = deps.clock.now();
        await e.transport.handleRequest(req, res, body);
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided (send initialize first)');
        return;
      }
      if (!(await makeRoom(caller.principal.actor))) { rpcError(res, 503, -32000, `Too many MCP sessions (${max})`); return; }
      const transport = await open(caller);
      await transport.handleRequest(req, res, body);
      // An initialize the transport refused opened no session: nothing to keep.
      if (!transport.sessionId || !sessions.has(transport.sessionId)) await transport.close();
    },
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((e) => e.transport.close()));
    },
  };
}
