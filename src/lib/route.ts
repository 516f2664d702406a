import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static, TSchema } from './typebox.ts';

/** Who may call a route. `read` < `task` < `operate` < `admin`; `public` needs nothing; `hmac` verifies its own signature. */
export type Access = 'public' | 'hmac' | 'read' | 'task' | 'operate' | 'admin';

/**
 * What a task-scoped token (an agent's) may do on a route: `own` = the route's `task_id` is its task,
 * `parent` = it creates a subtask of its task, `session` = it reads its own session, `mcp` = the MCP
 * endpoint, whose every tool checks the scope of the operation it mirrors (the handler checks the last
 * three). A route without one refuses task-scoped tokens.
 */
export type TaskScope = 'own' | 'parent' | 'session' | 'mcp';

/** Token roles of DECISIONS.md (Access). */
export type Role = 'admin' | 'operator' | 'agent' | 'viewer';

/** Scopes of cluster node tokens (INTERFACE.md Authentication 8); an admin token holds all of them. */
export type NodeScope = 'node:register' | 'node:heartbeat' | 'node:admin';

/** The authenticated caller of a request. */
export interface Principal {
  /** How the caller proved itself. */
  kind: 'token' | 'env' | 'admin-file' | 'disabled' | 'anonymous' | 'hmac' | 'session' | 'node' | 'cluster-secret';
  role: Role;
  /** Tenant the credential is bound to; null = may name any tenant. */
  tenant: string | null;
  /** Stable name for logs, audit and rate limits (token id, user id, "env", "anonymous"). */
  actor: string;
  /** Set on agent tokens scoped to one task. */
  taskId?: string;
  /** Set on SSO sign-in sessions (the actor is then the user id). */
  sid?: string;
  /** Cluster scopes of a node token or the cluster secret (other principals: admin holds all, the rest none). */
  scopes?: readonly NodeScope[];
  /** The node a node token speaks for. */
  nodeId?: string;
}

/** Who acts and in which tenant. */
export interface Actor {
  actor: string;
  tenant: string;
  /** A cluster node acting with its token: its claims record it, its writes are fenced to the tasks it holds. */
  node?: string;
}

/** What a handler sees. Params, query and body are already validated (and query values converted). */
export interface RouteContext<P = unknown, Q = unknown, B = unknown> {
  req: IncomingMessage;
  res: ServerResponse;
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /**
   * The caller's actor and the tenant the request acts in (X-Tenant-ID, ?tenant=, or the body's tenant on
   * routes with `bodyTenant`), resolved by the pipeline once, on first use: a refused scope throws (403
   * bound elsewhere, 404 unknown tenant, 422 when they disagree).
   */
  readonly who: Actor;
  requestId: string;
  /** Client IP (TCP peer). */
  ip: string;
  /** The body's bytes exactly as received, on `rawBody` routes. */
  raw?: Buffer;
}

/** What a route's `verify` sees: the request and its exact body bytes, before any parsing. */
export interface VerifyContext {
  req: IncomingMessage;
  raw: Buffer;
  params: Record<string, string>;
}

/** A handler's answer. A plain value is sent as 200 JSON; RAW means the handler wrote the response itself. */
export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}
export const RAW: unique symbol = Symbol('raw-response');
export const reply = (status: number, body: unknown, headers?: Record<string, string>): Reply & { [REPLY]: true } =>
  ({ status, body, headers, [REPLY]: true });
export const REPLY: unique symbol = Symbol('reply');
export const isReply = (v: unknown): v is Reply => typeof v === 'object' && v !== null && REPLY in v;

export interface ResponseDoc {
  description: string;
  schema?: TSchema;
  /** Default application/json. */
  contentType?: string;
}

/** A route record: the same data mounts the handler, validates input and documents the endpoint. */
export interface Route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path pattern: static segments and `:name` parameters, e.g. /tasks/:task_id (server/router.ts). */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  access: Access;
  /** Whether and how a token scoped to one task may call this route (absent: 403 for such tokens). */
  taskScope?: TaskScope;
  /** The `WWW-Authenticate` value of this route's 401 answers (RFC 6750: MCP clients find the resource metadata there). */
  challenge?: (req: IncomingMessage) => string;
  /** The cluster scope the caller must hold (node tokens, the cluster secret, admin tokens); 403 without it. */
  nodeScope?: NodeScope;
  params?: P;
  query?: Q;
  body?: B;
  /** Body is optional (an empty body is treated as {} / undefined). */
  bodyOptional?: boolean;
  /**
   * Read the body's bytes as received (webhooks): `ctx.raw`. Without `body` the handler also gets them as
   * `ctx.body`; with `body` they are parsed and validated after `verify` passed.
   */
  rawBody?: boolean;
  /** On `rawBody` routes: check the bytes (a signature) before anything parses them; throw to refuse. */
  verify?: (ctx: VerifyContext) => void | Promise<void>;
  /** The tenant a body names (task creation): it obeys the same scope rules as the header, never silently dropped. */
  bodyTenant?: (body: Static<B>) => string | undefined;
  /** Accept application/x-www-form-urlencoded (parsed into an object) as well as JSON. */
  form?: boolean;
  responses: Record<number, ResponseDoc>;
  /** Left out of /openapi.json (static assets such as the Swagger UI files). */
  hidden?: boolean;
  /** A large answer (logs, lists): one client runs at most `server.heavy_reads_per_client` of them at once. */
  heavy?: boolean;
  handler: (ctx: RouteContext<Static<P>, Static<Q>, Static<B>>) => unknown;
}

/** Identity function that keeps the schema types for the handler. */
export function defineRoute<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema>(
  r: Route<P, Q, B>,
): Route {
  return r as unknown as Route;
}
