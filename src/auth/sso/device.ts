// Pure rules of the device-code login (RFC 8628 shapes of DECISIONS.md): the state table, polling
// answers with slow_down, and the user code format. No clock, no randomness: both come in as values.

/** Alphabet of user codes: consonants only, so no ambiguous letters (0/O, 1/I) and no words. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const DEVICE_TTL_S = 600;
export const DEVICE_INTERVAL_S = 5;
/** RFC 8628 §3.5: each slow_down adds five seconds to the interval. */
export const SLOW_DOWN_STEP_S = 5;

export type DeviceState = 'pending' | 'authorized' | 'complete' | 'expired';
export type DeviceEvent = 'authorize' | 'redeem' | 'expire';

/** Every allowed transition; anything else is refused. */
export const DEVICE_MACHINE = {
  pending: { authorize: 'authorized', expire: 'expired' },
  authorized: { redeem: 'complete', expire: 'expired' },
  complete: {},
  expired: {},
} as const satisfies Record<DeviceState, Partial<Record<DeviceEvent, DeviceState>>>;

/** The state after `event`, or null when the table has no such transition. */
export function deviceStep(state: DeviceState, event: DeviceEvent): DeviceState | null {
  return (DEVICE_MACHINE[state] as Partial<Record<DeviceEvent, DeviceState>>)[event] ?? null;
}

/** One pending device login, in memory. */
export interface DeviceRecord {
  deviceCode: string;
  userCode: string;
  state: DeviceState;
  createdAt: number;
  expiresAt: number;
  intervalS: number;
  lastPollAt: number | null;
  clientName: string | null;
  /** Set once a signed-in user authorized the code. */
  userId: string | null;
}

export type PollAnswer = 'pending' | 'slow_down' | 'complete' | 'expired';

/** What a poll at `now` answers and the record that follows (null = forget it: redeemed or expired). */
export function poll(rec: DeviceRecord, now: number): { answer: PollAnswer; next: DeviceRecord | null } {
  if (now >= rec.expiresAt || rec.state === 'expired' || rec.state === 'complete') return { answer: 'expired', next: null };
  if (rec.lastPollAt !== null && now - rec.lastPollAt < rec.intervalS * 1000) {
    return { answer: 'slow_down', next: { ...rec, lastPollAt: now, intervalS: rec.intervalS + SLOW_DOWN_STEP_S } };
  }
  if (rec.state === 'authorized') return { answer: 'complete', next: null };
  return { answer: 'pending', next: { ...rec, lastPollAt: now } };
}

/** The user code for 8 random bytes: XXXX-XXXX over the alphabet (modulo bias of 256 % 20 is irrelevant here). */
export function formatUserCode(bytes: Uint8Array): string {
  if (bytes.length < 8) throw new Error('a user code needs 8 random bytes');
  const chars = Array.from(bytes.subarray(0, 8), (b) => USER_CODE_ALPHABET[b % USER_CODE_ALPHABET.length]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}

/** What a person typed, as a user code (case, spaces and dashes forgiven), or null when it cannot be one. */
export function normalizeUserCode(input: string): string | null {
  const letters = input.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== 8 || [...letters].some((c) => !USER_CODE_ALPHABET.includes(c))) return null;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}
