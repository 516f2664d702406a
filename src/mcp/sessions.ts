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
  return new SessionTable(deps);
}

class SessionTable implements McpSessions {
  private readonly sessions = new Map<string, Entry>();
  private readonly sweep: NodeJS.Timeout;
  private readonly max: number;

  constructor(private readonly deps: SessionDeps) {
    this.max = deps.maxSessions ?? 1000;
    const idleMs = deps.idleMs ?? 3_600_000;
    this.sweep = setInterval(() => {
      const old = deps.clock.now() - idleMs;
      for (const e of this.sessions.values()) if (e.lastSeen < old) void e.transport.close();
    }, 60_000);
    this.sweep.unref();
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Caller): Promise<void> {
    // A client that hangs up mid-call (a long next_task) must not be handed a task nobody receives.
    const gone = new AbortController();
    res.once('close', () => { if (!res.writableFinished) gone.abort(); });
    Object.assign(req, { auth: { token: '', clientId: caller.principal.actor, scopes: [], extra: { caller, gone: gone.signal } } });
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const e = this.sessions.get(sid);
      // Another actor's session is not found either: its id says nothing, and its stream stays its own.
      if (!e || e.actor !== caller.principal.actor) { rpcError(res, 404, -32001, 'Session not found'); return; }
      e.lastSeen = this.deps.clock.now();
      await e.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided (send initialize first)');
      return;
    }
    if (!(await this.makeRoom(caller.principal.actor))) { rpcError(res, 503, -32000, `Too many MCP sessions (${this.max})`); return; }
    const transport = await this.open(caller.principal.actor);
    await transport.handleRequest(req, res, body);
    // An initialize the transport refused opened no session: nothing to keep.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await transport.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.values()].map((e) => e.transport.close()));
  }

  // Room for one more session of `actor`: its oldest session goes when it has too many.
  private async makeRoom(actor: string): Promise<boolean> {
    const perActor = this.deps.maxPerActor ?? 32;
    const own = [...this.sessions.values()].filter((e) => e.actor === actor).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const e of own.slice(0, Math.max(0, own.length - perActor + 1))) await e.transport.close();
    return this.sessions.size < this.max;
  }

  // A transport and server for a new session; it joins the table once initialize succeeded.
  private async open(actor: string): Promise<StreamableHTTPServerTransport> {
    const { server, dispose } = createMcpServer(this.deps);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: this.deps.newId,
      enableJsonResponse: true,
      onsessioninitialized: (id) => { this.sessions.set(id, { transport, actor, lastSeen: this.deps.clock.now(), dispose }); },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      dispose();
    };
    await server.connect(transport);
    return transport;
  }
}
