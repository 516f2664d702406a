// Sign-in sessions: a JWT (HS256, key .sdd/secrets/session.key) naming a `sid`, and the session
// records that say whether that sid is still good (logout revokes it) in .sdd/secrets/sso-sessions.json.
import { randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../lib/clock.ts';
import { unauthorized } from '../../lib/http-error.ts';
import type { SddLayout } from '../../store/layout.ts';
import { ensureSecretsDir } from '../tokens.ts';
import { SecretJson } from './secret-json.ts';

const ISSUER = 'svc';
const AUDIENCE = 'svc-session';
const INVALID = 'Invalid or expired session';

export interface SessionRecord {
  sid: string;
  user_id: string;
  /** browser = cookie from an SSO login; device = token of `svc login`. */
  via: 'browser' | 'device';
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** Read the session key (created 0600 when absent); refused when group/others can read it. */
export async function loadSessionKey(layout: SddLayout): Promise<Uint8Array> {
  const path = layout.sessionKey;
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
  if (!st) {
    await ensureSecretsDir(layout);
    const fh = await open(path, 'wx', 0o600).catch((e: NodeJS.ErrnoException) => { if (e.code === 'EEXIST') return undefined; throw e; });
    if (fh) {
      try { await fh.writeFile(randomBytes(32).toString('hex') + '\n'); await fh.sync(); } finally { await fh.close(); }
    }
    return loadSessionKey(layout);
  }
  // Whoever reads this key can mint a session for any user.
  if ((st.mode & 0o077) !== 0) throw new Error(`${path}: mode ${(st.mode & 0o777).toString(8)} gives group/others access; chmod 600 it`);
  const hex = (await readFile(path, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${path}: expected 64 hex characters`);
  return Buffer.from(hex, 'hex');
}

interface SessionsFile { version: number; sessions: SessionRecord[] }

/** Issues, checks and revokes sessions. */
export class SessionRegistry {
  private sessions = new Map<string, SessionRecord>();
  private version = 0;
  private key: Uint8Array = new Uint8Array();
  private readonly file: SecretJson<SessionsFile>;
  constructor(private readonly layout: SddLayout, private readonly clock: Clock, private readonly ttlS: number) {
    this.file = new SecretJson(layout, layout.ssoSessions);
  }

  async load(): Promise<void> {
    this.key = await loadSessionKey(this.layout);
    const f = await this.file.load({ version: 0, sessions: [] });
    this.version = f.version;
    this.sessions = new Map(f.sessions.map((s) => [s.sid, s]));
  }

  /** A new session for a user and its JWT. */
  async create(userId: string, via: SessionRecord['via'], meta: { ip?: string; userAgent?: string } = {}): Promise<{ session: SessionRecord; token: string }> {
    const now = this.clock.now();
    const exp = Math.floor(now / 1000) + this.ttlS;
    const session: SessionRecord = {
      sid: randomBytes(16).toString('hex'), user_id: userId, via, created_at: new Date(now).toISOString(),
      expires_at: new Date(exp * 1000).toISOString(), revoked_at: null,
      ip: meta.ip ?? null, user_agent: meta.userAgent?.slice(0, 200) ?? null,
    };
    const token = await new SignJWT({ sid: session.sid }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(userId).setIssuedAt(Math.floor(now / 1000)).setExpirationTime(exp)
      .sign(this.key);
    this.sessions.set(session.sid, session);
    await this.save();
    return { session, token };
  }

  /** The live session a JWT stands for, or 401 (bad signature, expired, revoked or unknown sid). */
  async verify(token: string): Promise<SessionRecord> {
    let sid: unknown, sub: unknown;
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], currentDate: new Date(this.clock.now()),
      });
      ({ sid, sub } = payload);
    } catch {
      throw unauthorized(INVALID);
    }
    const s = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    if (!s || s.user_id !== sub || s.revoked_at || Date.parse(s.expires_at) <= this.clock.now()) throw unauthorized(INVALID);
    return s;
  }

  /** Revoke a session (idempotent); false when unknown. */
  async revoke(sid: string): Promise<boolean> {
    const s = this.sessions.get(sid);
    if (!s) return false;
    if (!s.revoked_at) {
      this.sessions.set(sid, { ...s, revoked_at: this.clock.iso() });
      await this.save();
    }
    return true;
  }

  get ttlSeconds(): number {
    return this.ttlS;
  }

  // Expired sessions are dropped: their JWT is refused on its own `exp` anyway.
  private save(): Promise<void> {
    const now = this.clock.now();
    for (const [sid, s] of this.sessions) if (Date.parse(s.expires_at) <= now) this.sessions.delete(sid);
    this.version += 1;
    return this.file.save({ version: this.version, sessions: [...this.sessions.values()] });
  }
}
