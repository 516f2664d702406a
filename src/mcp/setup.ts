// The MCP server of `svc up`: the door to the board, the session table and the /mcp routes, built once.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import { createBoard, type BoardDeps } from './board.ts';
import { mcpRoutes, type McpSessions } from './routes.ts';

export interface McpDeps extends BoardDeps {
  version: string;
  log: Logger;
  clock: Clock;
  /** Unguessable session ids. */
  newId: () => string;
  /** `auth.sso.public_url`: the base URL of the resource metadata; default the Host of each request. */
  publicUrl?: string;
}

/** What the server mounts, and how it ends every session when it stops. */
export interface Mcp {
  routes: Route[];
  close(): Promise<void>;
}

/**
 * Build the MCP server over the mounted task routes (call after they exist). The SDK (and its schemas) loads
 * with the first /mcp request, so a server nobody asks for MCP starts as fast as before.
 */
export function createMcp(deps: McpDeps): Mcp {
  const board = createBoard(deps);
  let loaded: Promise<McpSessions> | undefined;
  const load = () => (loaded ??= import('./sessions.ts').then((m) => m.createSessions({ board, version: deps.version, log: deps.log, clock: deps.clock, newId: deps.newId })));
  const sessions: McpSessions = {
    handle: async (req, res, body, caller) => (await load()).handle(req, res, body, caller),
    close: async () => { if (loaded) await (await loaded).close(); },
  };
  return { routes: mcpRoutes({ board, sessions, ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}) }), close: () => sessions.close() };
}
