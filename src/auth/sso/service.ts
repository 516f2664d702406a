// Single sign-on: finishes logins from either provider into users and sessions, runs the device flow,
// and audits every login, logout, role change and mapping change with the identity.
import type { SsoConfig } from '../../config/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, tooMany, unauthorized, unavailable } from '../../lib/http-error.ts';
import type { Logger } from '../../lib/log.ts';
import type { Principal } from '../../lib/route.ts';
import type { SddLayout } from '../../store/layout.ts';
import { DeviceRegistry, type Random } from './devices.ts';
import { GroupMappings } from './mappings.ts';
import type { OidcClient } from './oidc.ts';
import { checkMappings, diffMappings, profileOf, roleFromGroups, type GroupMapping } from './policy.ts';
import type { SamlClient } from './saml.ts';
import { SessionRegistry, type SessionRecord } from './sessions.ts';
import { UserRegistry, type Identity, type RoleChange, type UserRecord } from './users.ts';

/** An audit entry of the auth domain. */
export interface AuthAuditEntry {
  actor: string;
  action: string;
  resource_type: 'user' | 'session' | 'group_mappings';
  resource_id: string | null;
  details: Record<string, unknown>;
}
export interface AuthAuditSink {
  append(entry: AuthAuditEntry): Promise<unknown>;
}

export interface SsoDeps {
  config: SsoConfig;
  layout: SddLayout;
  clock: Clock;
  log: Logger;
  audit: AuthAuditSink;
  oidc?: OidcClient;
  saml?: SamlClient;
  random?: Random;
  /** Told about each write of the committed mapping file. */
  onWrite?: (abs: string, text: string, note: string) => void;
}

/** Who signed in, as the audit log names them. */
const identityOf = (u: UserRecord) => ({ provider: u.provider, issuer: u.issuer, subject: u.subject, email: u.email });

/** The SSO domain behind the /auth routes. */
export class SsoService {
  readonly users: UserRegistry;
  readonly sessions: SessionRegistry;
  readonly mappings: GroupMappings;
  readonly devices: DeviceRegistry;
  constructor(readonly deps: SsoDeps) {
    this.users = new UserRegistry(deps.layout);
    this.sessions = new SessionRegistry(deps.layout, deps.clock, deps.config.session_ttl_s);
    this.mappings = new GroupMappings(deps.layout, deps.onWrite);
    this.devices = new DeviceRegistry({ clock: deps.clock, ...(deps.random ? { random: deps.random } : {}) });
  }

  /** Load users, sessions and mappings; roles follow mappings edited while the server was down. */
  async load(): Promise<void> {
    await Promise.all([this.users.load(), this.sessions.load(), this.mappings.load()]);
    await this.auditRoles(await this.users.applyMappings(this.mappings.current, this.deps.config.default_role), 'system', 'mappings file');
  }

  /** Which providers are on. */
  get enabled(): { oidc: boolean; saml: boolean } {
    return { oidc: Boolean(this.deps.oidc), saml: Boolean(this.deps.saml) };
  }

  /** The principal of a session JWT (bearer or cookie), or 401. */
  async principal(token: string): Promise<Principal> {
    const session = await this.sessions.verify(token);
    const user = this.users.get(session.user_id);
    if (!user) throw unauthorized('Invalid or expired session');
    return { kind: 'session', role: user.role, tenant: null, actor: user.id, sid: session.sid };
  }

  /** A finished login of either provider: the user (created or updated), its role, a new session. */
  async signIn(identity: Identity, via: SessionRecord['via'], meta: { ip?: string; userAgent?: string } = {}) {
    if (!identity.issuer || !identity.subject) throw badRequest('The identity provider named no issuer or subject');
    const role = roleFromGroups(identity.groups, this.mappings.current, this.deps.config.default_role);
    const change = await this.users.signIn(identity, role, this.deps.clock.iso());
    const { session, token } = await this.sessions.create(change.user.id, via, meta);
    await this.auditLogin(session, {
      actor: change.user.id, action: 'auth.login', resource_type: 'user', resource_id: change.user.id,
      details: { ...identityOf(change.user), role, groups: change.user.groups, sid: session.sid, via, ip: meta.ip ?? null, new_user: change.created },
    });
    if (!change.created && change.from !== change.to) await this.auditRoles([change], change.user.id, 'groups at login');
    return { user: change.user, session, token };
  }

  /** Revoke the caller's session (POST /auth/logout). */
  async logout(p: Principal): Promise<void> {
    if (!p.sid) throw badRequest('No sign-in session to log out of: this credential is a token (revoke it with svc token revoke)');
    await this.sessions.revoke(p.sid);
    const user = this.users.get(p.actor);
    await this.audit({
      actor: p.actor, action: 'auth.logout', resource_type: 'session', resource_id: p.sid,
      details: user ? { ...identityOf(user), user_id: user.id } : { user_id: p.actor },
    });
  }

  /** GET /auth/me: the signed-in user, or the token behind the request. */
  profile(p: Principal) {
    return profileOf(p, p.kind === 'session' ? this.users.get(p.actor) : undefined);
  }

  /** Replace the mappings (admin); every user's role follows at once. */
  async setMappings(input: { group: string; role: string }[], p: Principal): Promise<GroupMapping[]> {
    const next = checkMappings(input);
    const before = this.mappings.current;
    await this.mappings.replace(next, `group mappings: ${next.length} by ${p.actor}`);
    await this.audit({
      actor: p.actor, action: 'auth.mappings_update', resource_type: 'group_mappings', resource_id: null,
      details: { ...diffMappings(before, next), count: next.length },
    });
    await this.auditRoles(await this.users.applyMappings(next, this.deps.config.default_role), p.actor, 'mapping change');
    return next;
  }

  /** A signed-in user approves a device code (POST /auth/cli/authorize). */
  async authorizeDevice(userCode: string, p: Principal, ip: string) {
    if (p.kind !== 'session' || !p.sid) throw unauthorized('Sign in with single sign-on to authorize a device');
    const now = this.deps.clock.now();
    const limit = this.devices.entryLimit;
    const keys = [`sid:${p.sid}`, `ip:${ip}`];
    const wait = keys.map((k) => limit.blocked(k, now)).find((s) => s !== null);
    if (wait !== undefined && wait !== null) throw tooMany('Too many wrong codes; try again later', wait);
    let rec;
    try {
      rec = this.devices.authorize(userCode, p.actor);
    } catch (err) {
      for (const k of keys) limit.fail(k, now);
      throw err;
    }
    await this.audit({
      actor: p.actor, action: 'auth.device_authorize', resource_type: 'user', resource_id: p.actor,
      details: { user_code: rec.userCode, client_name: rec.clientName, ip },
    });
    return rec;
  }

  /** POST /auth/cli/token: pending / slow_down / expired, or complete with a new session token. */
  async pollDevice(deviceCode: string, meta: { ip?: string; userAgent?: string }) {
    const { answer, record, intervalS } = this.devices.poll(deviceCode);
    if (answer !== 'complete' || !record?.userId) return intervalS === undefined ? { status: answer } : { status: answer, interval: intervalS };
    const user = this.users.get(record.userId);
    if (!user) return { status: 'expired' as const };
    const { session, token } = await this.sessions.create(user.id, 'device', meta);
    await this.auditLogin(session, {
      actor: user.id, action: 'auth.login', resource_type: 'user', resource_id: user.id,
      details: { ...identityOf(user), role: user.role, groups: user.groups, sid: session.sid, via: 'device', client_name: record.clientName, ip: meta.ip ?? null, new_user: false },
    });
    return { status: 'complete' as const, access_token: token, token_type: 'Bearer', expires_at: session.expires_at };
  }

  private async auditRoles(changes: RoleChange[], actor: string, reason: string): Promise<void> {
    for (const c of changes) {
      await this.audit({
        actor, action: 'auth.role_change', resource_type: 'user', resource_id: c.user.id,
        details: { ...identityOf(c.user), from: c.from, to: c.to, reason },
      });
    }
  }

  // A login nobody can audit does not happen: the new session is revoked and the caller gets 503.
  private async auditLogin(session: SessionRecord, entry: AuthAuditEntry): Promise<void> {
    try {
      await this.deps.audit.append(entry);
    } catch (err) {
      this.deps.log.error(`audit append failed for ${entry.action} ${entry.resource_id ?? ''}: login refused`, err);
      await this.sessions.revoke(session.sid);
      throw unavailable('Audit log unavailable; sign-in refused');
    }
  }

  // Other audit appends that fail are logged: a logout or a saved mapping has already happened.
  private async audit(entry: AuthAuditEntry): Promise<void> {
    try {
      await this.deps.audit.append(entry);
    } catch (err) {
      this.deps.log.error(`audit append failed for ${entry.action} ${entry.resource_id ?? ''}`, err);
    }
  }
}
