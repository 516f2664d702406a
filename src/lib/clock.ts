// Injected time, so tests can freeze or advance it.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** ISO-8601 UTC with milliseconds, e.g. 2026-11-21T19:02:03.456Z. */
  iso(): string;
}

/** The real wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  iso: () => new Date().toISOString(),
};

/** A clock that only moves when told to; for tests. */
export function manualClock(start = Date.parse('2026-01-01T00:00:00.000Z')): Clock & { advance(ms: number): void } {
  let t = start;
  return { now: () => t, iso: () => new Date(t).toISOString(), advance: (ms) => { t += ms; } };
}
