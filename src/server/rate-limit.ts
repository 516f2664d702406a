import type { Clock } from '../lib/clock.ts';

/** A token bucket: `tokens` left at time `at` (ms). */
export interface Bucket {
  tokens: number;
  at: number;
}

/** Pure token-bucket step: refill by elapsed time, take one token or say how long until one is there. */
export function takeToken(
  prev: Bucket | undefined, now: number, ratePerS: number, burst: number,
): { bucket: Bucket; allowed: boolean; retryAfterS: number } {
  const refilled = prev ? Math.min(burst, prev.tokens + ((now - prev.at) / 1000) * ratePerS) : burst;
  if (refilled >= 1) return { bucket: { tokens: refilled - 1, at: now }, allowed: true, retryAfterS: 0 };
  return { bucket: { tokens: refilled, at: now }, allowed: false, retryAfterS: (1 - refilled) / ratePerS };
}

/** Per-client rate limiter; `check(key)` answers null (go on) or the seconds to wait. */
export interface RateLimiter {
  check(key: string): number | null;
}

/** In-memory buckets keyed by client; idle (full) buckets are dropped once `maxKeys` is reached. */
export function createRateLimiter(opts: { ratePerS: number; burst: number; clock: Clock; maxKeys?: number }): RateLimiter {
  const buckets = new Map<string, Bucket>();
  const maxKeys = opts.maxKeys ?? 10_000;
  const prune = (now: number) => {
    for (const [k, b] of buckets) {
      if (b.tokens + ((now - b.at) / 1000) * opts.ratePerS >= opts.burst) buckets.delete(k);
    }
    // Still full of busy clients: forget the oldest half rather than grow without bound.
    if (buckets.size >= maxKeys) [...buckets.keys()].slice(0, maxKeys / 2).forEach((k) => buckets.delete(k));
  };
  return {
    check(key) {
      const now = opts.clock.now();
      if (!buckets.has(key) && buckets.size >= maxKeys) prune(now);
      const step = takeToken(buckets.get(key), now, opts.ratePerS, opts.burst);
      buckets.set(key, step.bucket);
      return step.allowed ? null : step.retryAfterS;
    },
  };
}
