import { forbidden, type HttpError } from '../lib/http-error.ts';
import type { Access, Principal, Role } from '../lib/route.ts';

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
 * A token scoped to one task may not touch another task's `task_id` route.
 */
export function accessDenied(principal: Principal, access: Access, params: Record<string, unknown>): HttpError | null {
  if (!roleAllows(principal.role, access)) {
    return forbidden(access === 'admin' ? 'admin role required' : `${principal.role} role cannot access this endpoint`);
  }
  const taskId = params.task_id;
  if (principal.taskId && typeof taskId === 'string' && taskId !== principal.taskId) {
    return forbidden(`token is scoped to task '${principal.taskId}'`);
  }
  return null;
}
