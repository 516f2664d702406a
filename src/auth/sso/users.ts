// Users who signed in through SSO, identified by (provider, issuer, subject) and never by email
// (DECISIONS.md); kept in .sdd/secrets/sso-users.json because they are personal data.
import { createHash } from 'node:crypto';
import type { Role } from '../../lib/route.ts';
import type { SddLayout } from '../../store/layout.ts';
import type { GroupMapping } from './policy.ts';
import { roleFromGroups } from './policy.ts';
import { SecretJson } from './secret-json.ts';

/** Who the identity provider says signed in. */
export interface Identity {
  provider: 'oidc' | 'saml';
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

export interface UserRecord {
  id: string;
  provider: 'oidc' | 'saml';
  issuer: string;
  subject: string;
  email: string | null;
  display_name: string | null;
  groups: string[];
  role: Role;
  created_at: string;
  last_login_at: string;
}

/** A role that moved, for the audit log. */
export interface RoleChange {
  user: UserRecord;
  from: Role | null;
  to: Role;
}

/** The stable user id of an identity: the same (provider, issuer, subject) is always the same user. */
export function userIdOf(id: Pick<Identity, 'provider' | 'issuer' | 'subject'>): string {
  return `usr_${createHash('sha256').update(`${id.provider}\n${id.issuer}\n${id.subject}`).digest('hex').slice(0, 16)}`;
}

interface UsersFile { version: number; users: UserRecord[] }

/** Every SSO user, in memory, saved on each change. */
export class UserRegistry {
  private users = new Map<string, UserRecord>();
  private version = 0;
  private readonly file: SecretJson<UsersFile>;
  constructor(layout: SddLayout) {
    this.file = new SecretJson(layout, layout.ssoUsers);
  }

  async load(): Promise<void> {
    const f = await this.file.load({ version: 0, users: [] });
    this.version = f.version;
    this.users = new Map(f.users.map((u) => [u.id, u]));
  }

  get(id: string): UserRecord | undefined {
    return this.users.get(id);
  }

  all(): UserRecord[] {
    return [...this.users.values()].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** Record a sign-in: create or update the user with the groups and role it brought. */
  async signIn(identity: Identity, role: Role, now: string): Promise<RoleChange & { created: boolean }> {
    const id = userIdOf(identity);
    const old = this.users.get(id);
    const user: UserRecord = {
      id, provider: identity.provider, issuer: identity.issuer, subject: identity.subject, email: identity.email,
      display_name: identity.name, groups: [...new Set(identity.groups)].sort(), role,
      created_at: old?.created_at ?? now, last_login_at: now,
    };
    this.users.set(id, user);
    await this.save();
    return { user, from: old?.role ?? null, to: role, created: !old };
  }

  /** Recompute every role after a mapping change; returns the users whose role moved. */
  async applyMappings(mappings: readonly GroupMapping[], fallback: Role): Promise<RoleChange[]> {
    const changes: RoleChange[] = [];
    for (const user of this.users.values()) {
      const to = roleFromGroups(user.groups, mappings, fallback);
      if (to === user.role) continue;
      changes.push({ user: { ...user, role: to }, from: user.role, to });
      this.users.set(user.id, { ...user, role: to });
    }
    if (changes.length) await this.save();
    return changes;
  }

  private save(): Promise<void> {
    this.version += 1;
    return this.file.save({ version: this.version, users: this.all() });
  }
}
