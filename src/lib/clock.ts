// Injected time, so tests can freeze or advance it.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** ISO-8601 UTC with milliseconds, e.g. 2026-11-21T19:02:03.456Z. */
  iso(): string;
}

// The ISO text of the last millisecond asked for: a busy server asks several times per millisecond (a
// change's time, its audit record's), and each record then shares the one string.
let lastMs = NaN;
let lastIso = '';

/** ISO-8601 UTC text of an epoch time in ms; the same string again within one millisecond. */
export function isoOf(ms: number): string {
  if (ms !== lastMs) { lastIso = new Date(ms).toISOString(); lastMs = ms; }
  return lastIso;
}

/** The real wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  iso: () => isoOf(Date.now()),
};

/** A clock that only moves when told to; for tests. */
export function manualClock(start = Date.parse('2026-01-01T00:00:00.000Z')): Clock & { advance(ms: number): void } {
  let t = start;
  return { now: () => t, iso: () => isoOf(t), advance: (ms) => { t += ms; } };
}
