// Pending device logins in memory (10 minutes each), with the attempt limits of the code entry page.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { badRequest, tooMany } from '../../lib/http-error.ts';
import {
  DEVICE_INTERVAL_S, DEVICE_TTL_S, deviceStep, formatUserCode, normalizeUserCode, poll, type DeviceRecord, type PollAnswer,
} from './device.ts';

export type Random = (bytes: number) => Buffer;

/** Fixed-window failure counter per key (session, IP): blocked after `max` failures within `windowMs`. */
export class AttemptLimiter {
  private fails = new Map<string, { start: number; n: number }>();
  constructor(private readonly max: number, private readonly windowMs: number) {}

  /** Seconds to wait when `key` has used up its failures at `now`, else null. */
  blocked(key: string, now: number): number | null {
    const cur = this.fails.get(key);
    if (!cur || now - cur.start >= this.windowMs || cur.n < this.max) return null;
    return Math.max(1, Math.ceil((cur.start + this.windowMs - now) / 1000));
  }

  /** Count one failure of `key` at `now`. */
  fail(key: string, now: number): void {
    const cur = this.fails.get(key);
    if (cur && now - cur.start < this.windowMs) { cur.n += 1; return; }
    if (this.fails.size > 10_000) this.prune(now);
    this.fails.set(key, { start: now, n: 1 });
  }

  private prune(now: number): void {
    for (const [k, v] of this.fails) if (now - v.start >= this.windowMs) this.fails.delete(k);
  }
}

const MAX_PENDING = 1000;
const INVALID_CODE = 'Invalid or expired user code';

/** Device codes waiting for a person to sign in and enter the user code. */
export class DeviceRegistry {
  private byDevice = new Map<string, DeviceRecord>();
  private byUser = new Map<string, string>();
  /** Code entry: 10 wrong codes per 10 minutes for each session and each client address. */
  readonly entryLimit = new AttemptLimiter(10, 600_000);

  constructor(private readonly deps: { clock: Clock; random?: Random }) {}

  /** A new device login (POST /auth/cli/device). */
  start(clientName: string | null): DeviceRecord {
    const now = this.deps.clock.now();
    this.prune(now);
    if (this.byDevice.size >= MAX_PENDING) throw tooMany('Too many pending device logins; try again later', 60);
    const random = this.deps.random ?? randomBytes;
    let userCode = formatUserCode(random(8));
    while (this.byUser.has(userCode)) userCode = formatUserCode(random(8));
    const rec: DeviceRecord = {
      deviceCode: random(32).toString('base64url'), userCode, state: 'pending', createdAt: now,
      expiresAt: now + DEVICE_TTL_S * 1000, intervalS: DEVICE_INTERVAL_S, lastPollAt: null, clientName, userId: null,
    };
    this.byDevice.set(rec.deviceCode, rec);
    this.byUser.set(userCode, rec.deviceCode);
    return rec;
  }

  /** POST /auth/cli/token: the answer, and on `complete` the record (now forgotten: single use). */
  poll(deviceCode: string): { answer: PollAnswer; record?: DeviceRecord; intervalS?: number } {
    const rec = this.byDevice.get(deviceCode);
    if (!rec) return { answer: 'expired' };
    const { answer, next } = poll(rec, this.deps.clock.now());
    if (next) this.byDevice.set(deviceCode, next);
    else this.forget(rec);
    if (answer === 'complete') return { answer, record: rec };
    return next ? { answer, intervalS: next.intervalS } : { answer };
  }

  /** The pending record a typed user code names, or 400. */
  lookup(input: string): DeviceRecord {
    const code = normalizeUserCode(input);
    const rec = code ? this.byDevice.get(this.byUser.get(code) ?? '') : undefined;
    if (!rec || rec.state !== 'pending' || this.deps.clock.now() >= rec.expiresAt) throw badRequest(INVALID_CODE);
    return rec;
  }

  /** Bind a pending code to the signed-in user (POST /auth/cli/authorize). */
  authorize(input: string, userId: string): DeviceRecord {
    const rec = this.lookup(input);
    const state = deviceStep(rec.state, 'authorize');
    if (!state) throw badRequest(INVALID_CODE);
    const next = { ...rec, state, userId };
    this.byDevice.set(rec.deviceCode, next);
    return next;
  }

  get size(): number {
    return this.byDevice.size;
  }

  private forget(rec: DeviceRecord): void {
    this.byDevice.delete(rec.deviceCode);
    this.byUser.delete(rec.userCode);
  }

  private prune(now: number): void {
    for (const rec of this.byDevice.values()) if (now >= rec.expiresAt) this.forget(rec);
  }
}
