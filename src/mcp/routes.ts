// POST|GET|DELETE /mcp (MCP streamable HTTP) behind the API's own bearer authentication, and the OAuth
// protected resource metadata (RFC 9728) the MCP authorization spec asks an HTTP server to publish.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '../lib/typebox.ts';
import { forbidden } from '../lib/http-error.ts';
import { defineRoute, RAW, type Route, type RouteContext } from '../lib/route.ts';
import { sendJson } from '../server/index.ts';
import type { Caller, McpBoard } from './board.ts';

/** The sessions of one server. */
export interface McpSessions {
  /** Answer one request of /mcp (POST, GET or DELETE) for an authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Caller): Promise<void>;
  /** Close every session (the server stops). */
  close(): Promise<void>;
}

/** A JSON-RPC error of the transport layer (the SDK's codes for these cases), with the API's `detail` beside it. */
export const rpcError = (res: ServerResponse, status: number, code: number, message: string): void =>
  sendJson(res, { status, body: { jsonrpc: '2.0', error: { code, message }, id: null, detail: message } });

export interface McpRouteDeps {
  board: McpBoard;
  sessions: McpSessions;
  /** Base URL people reach the server at; default: the Host of each request. */
  publicUrl?: string;
}

const METADATA = '/.well-known/oauth-protected-resource';

/** The base URL of a request: `publicUrl`, else http:// and its Host. */
export function baseUrl(req: IncomingMessage, publicUrl?: string): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const host = req.headers.host ?? '';
  return `http://${/^[\w.:[\]-]{1,255}$/.test(host) ? host : '127.0.0.1'}`;
}

/** The protected resource metadata of a resource: the server issues the bearer tokens itself (svc token create, svc login). */
export function resourceMetadata(base: string, path: '' | '/mcp') {
  return {
    resource: `${base}${path}`,
    authorization_servers: [base],
    bearer_methods_supported: ['header'],
    scopes_supported: [],
    resource_name: path ? 'svc task board (MCP)' : 'svc task board',
  };
}

const Rpc = { description: 'JSON-RPC message(s) of the MCP streamable HTTP transport', schema: Type.Unknown() };
const Metadata = Type.Object({
  resource: Type.String(), authorization_servers: Type.Array(Type.String()), bearer_methods_supported: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()), resource_name: Type.String(),
});

/** The MCP endpoint and its metadata documents. */
export function mcpRoutes(deps: McpRouteDeps): Route[] {
  const challenge = (req: IncomingMessage) => `Bearer resource_metadata="${baseUrl(req, deps.publicUrl)}${METADATA}/mcp"`;
  const handler = async (ctx: RouteContext<unknown, unknown, unknown>) => {
    checkOrigin(ctx.req, deps.publicUrl);
    let body: unknown;
    if (ctx.req.method === 'POST') {
      const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return rpcFail(ctx, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      try {
        body = JSON.parse((ctx.raw ?? Buffer.alloc(0)).toString('utf8'));
      } catch {
        return rpcFail(ctx, 400, -32700, 'Parse error: the body is not JSON');
      }
    }
    await deps.sessions.handle(ctx.req, ctx.res, body, deps.board.caller(ctx.principal, ctx.who));
    return RAW;
  };
  const endpoint = (method: 'POST' | 'GET' | 'DELETE', summary: string, responses: Route['responses']) => defineRoute({
    method, path: '/mcp', operationId: `mcp_${method.toLowerCase()}`, summary, tags: ['mcp'], access: 'read', taskScope: 'mcp', challenge,
    ...(method === 'POST' ? { rawBody: true } : {}),
    responses: { ...responses, 401: { description: 'No or bad token; WWW-Authenticate names the resource metadata' }, 404: { description: 'Unknown or expired session (start a new one)' } },
    handler,
  });
  const metadata = (path: '' | '/mcp') => defineRoute({
    method: 'GET', path: `${METADATA}${path}`, operationId: `oauth_protected_resource${path ? '_mcp' : ''}`, tags: ['mcp'], access: 'public',
    summary: `OAuth protected resource metadata (RFC 9728) of ${path ? '/mcp' : 'the API'}`,
    responses: { 200: { description: 'Metadata', schema: Metadata } },
    handler: (ctx) => resourceMetadata(baseUrl(ctx.req, deps.publicUrl), path),
  });
  return [
    endpoint('POST', 'MCP: one JSON-RPC message or batch (initialize opens a session: Mcp-Session-Id)', { 200: Rpc, 202: { description: 'Notification or response accepted' }, 400: Rpc }),
    endpoint('GET', 'MCP: the session\'s server-to-client event stream (resource updates)', { 200: { description: 'text/event-stream' } }),
    endpoint('DELETE', 'MCP: end the session', { 200: { description: 'Session ended' } }),
    metadata('/mcp'),
    metadata(''),
  ];
}

// A browser page of another origin may not drive the board (MCP: servers validate Origin).
function checkOrigin(req: IncomingMessage, publicUrl?: string): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const allowed = [`http://${req.headers.host ?? ''}`, `https://${req.headers.host ?? ''}`, ...(publicUrl ? [new URL(publicUrl).origin] : [])];
  if (!allowed.includes(origin)) throw forbidden(`Origin ${origin.slice(0, 200)} may not use /mcp`);
}

function rpcFail(ctx: RouteContext<unknown, unknown, unknown>, status: number, code: number, message: string): typeof RAW {
  rpcError(ctx.res, status, code, message);
  return RAW;
}
