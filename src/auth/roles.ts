import { forbidden, type HttpError } from '../lib/http-error.ts';
import type { Access, NodeScope, Principal, Role, TaskScope } from '../lib/route.ts';

/** Access levels each role holds (DECISIONS.md Access). */
export const ROLE_ACCESS = {
  viewer: ['read'],
  agent: ['read', 'task'],
  operator: ['read', 'task', 'operate'],
  admin: ['read', 'task', 'operate', 'admin'],
} as const satisfies Record<Role, readonly Access[]>;

/** True when `role` may call a route of `access` level ('public' and 'hmac' need no role). */
export function roleAllows(role: Role, access: Access): boolean {
  if (access === 'public' || access === 'hmac') return true;
  return (ROLE_ACCESS[role] as readonly Access[]).includes(access);
}

/**
 * Pure access decision for an authenticated principal: the 403 to answer, or null to go on.
 * A token scoped to one task reaches only routes that declare a `taskScope`, and with `own` only its
 * own `task_id`; `parent` and `session` scopes are checked by their handlers (`outsideTask`).
 */
export function accessDenied(principal: Principal, access: Access, params: Record<string, unknown>, taskScope?: TaskScope, nodeScope?: NodeScope): HttpError | null {
  if (!roleAllows(principal.role, access)) {
    return forbidden(access === 'admin' ? 'admin role required' : `${principal.role} role cannot access this endpoint`);
  }
  if (nodeScope && !holdsScope(principal, nodeScope)) {
    return forbidden(`Token lacks required scope '${nodeScope}' (has: [${scopesOf(principal).join(', ')}])`);
  }
  if (!principal.taskId) return null;
  if (!taskScope) return outsideTask(principal.taskId, 'this endpoint is outside its task');
  const taskId = params.task_id;
  if (taskScope === 'own' && taskId !== principal.taskId) return outsideTask(principal.taskId, `task '${String(taskId).slice(0, 100)}' is not its task`);
  return null;
}

/** The 403 for a task-scoped token reaching beyond its task. */
export function outsideTask(taskId: string, why: string): HttpError {
  return forbidden(`token is scoped to task '${taskId}': ${why}`);
}

/** The cluster scopes a principal holds: a node token's or the cluster secret's own, every scope for admins, else none. */
export function scopesOf(principal: Principal): readonly NodeScope[] {
  if (principal.scopes) return principal.scopes;
  return principal.role === 'admin' ? ['node:register', 'node:heartbeat', 'node:admin'] : [];
}

/** True when the principal may call a route (or RPC) that needs `scope`. */
export function holdsScope(principal: Principal, scope: NodeScope): boolean {
  return scopesOf(principal).includes(scope);
}
