// The MCP server of `svc up`: the door to the board, the session table and the /mcp routes, built once.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import { createBoard, type BoardDeps } from './board.ts';
import { mcpRoutes } from './routes.ts';
import { createSessions } from './sessions.ts';

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

/** Build the MCP server over the mounted task routes (call after they exist). */
export function createMcp(deps: McpDeps): Mcp {
  const board = createBoard(deps);
  const sessions = createSessions({ board, version: deps.version, log: deps.log, clock: deps.clock, newId: deps.newId });
  return { routes: mcpRoutes({ board, sessions, ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}) }), close: () => sessions.close() };
}
