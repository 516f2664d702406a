// Pure access policy of single sign-on: group → role mappings, a user's role, what a role may do.
import { badRequest } from '../../lib/http-error.ts';
import type { Access, Principal, Role } from '../../lib/route.ts';
import { ROLE_ACCESS } from '../roles.ts';
import type { UserRecord } from './users.ts';

/** Roles from the most to the least powerful. */
export const ROLE_RANK: readonly Role[] = ['admin', 'operator', 'agent', 'viewer'];

/** One SSO group granted one role. */
export interface GroupMapping {
  group: string;
  role: Role;
}

/** A user's role: the highest role among their mapped groups, else `fallback` (DECISIONS.md). */
export function roleFromGroups(groups: readonly string[], mappings: readonly GroupMapping[], fallback: Role): Role {
  const mine = new Set(groups);
  let best = ROLE_RANK.length;
  for (const m of mappings) {
    if (mine.has(m.group)) best = Math.min(best, ROLE_RANK.indexOf(m.role));
  }
  return ROLE_RANK[best] ?? fallback;
}

/** Check an update body: every role known (400 `Invalid role: <r>`), groups non-empty and unique; sorted by group. */
export function checkMappings(input: readonly { group: string; role: string }[]): GroupMapping[] {
  const seen = new Set<string>();
  for (const m of input) {
    if (!(ROLE_RANK as readonly string[]).includes(m.role)) throw badRequest(`Invalid role: ${m.role}`);
    const group = m.group.trim();
    if (!group) throw badRequest('Group names must not be empty');
    if (seen.has(group)) throw badRequest(`Group listed twice: ${group}`);
    seen.add(group);
  }
  return input.map((m) => ({ group: m.group.trim(), role: m.role as Role }))
    .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}

/** What changed between two mapping lists, for the audit log. */
export function diffMappings(before: readonly GroupMapping[], after: readonly GroupMapping[]) {
  const old = new Map(before.map((m) => [m.group, m.role]));
  const now = new Map(after.map((m) => [m.group, m.role]));
  return {
    added: after.filter((m) => !old.has(m.group)),
    removed: before.filter((m) => !now.has(m.group)),
    changed: after.filter((m) => old.has(m.group) && old.get(m.group) !== m.role)
      .map((m) => ({ group: m.group, from: old.get(m.group)!, to: m.role })),
  };
}

/** The access levels a role holds, as listed by GET /auth/me. */
export function permissionsOf(role: Role): Access[] {
  return [...ROLE_ACCESS[role]];
}

/** GET /auth/me: the signed-in user, or the token behind the request (no user then). */
export function profileOf(p: Principal, user: UserRecord | undefined) {
  return {
    id: user?.id ?? p.actor, kind: p.kind, provider: user?.provider ?? null, issuer: user?.issuer ?? null,
    subject: user?.subject ?? null, email: user?.email ?? null, display_name: user?.display_name ?? null,
    role: p.role, groups: user?.groups ?? [], permissions: permissionsOf(p.role), tenant: p.tenant,
  };
}
