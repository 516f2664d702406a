// One retry policy for background work that must eventually land (files behind the journal, lock waits).
import { sleep, type Timers } from './timers.ts';

/** Exponential backoff: `next()` gives the delay before the next try, `reset()` after a success. */
export interface Backoff {
  next(): number;
  reset(): void;
  /** The delay `next()` last gave (0 after a reset). */
  readonly current: number;
}

/** Delays from `minMs`, times `factor` each try, capped at `maxMs`. */
export function backoff(minMs: number, maxMs: number, factor = 2): Backoff {
  let current = 0;
  return {
    next: () => (current = current ? Math.min(current * factor, maxMs) : minMs),
    reset: () => { current = 0; },
    get current() { return current; },
  };
}

export interface RetryOptions {
  timers: Timers;
  minMs: number;
  maxMs: number;
  /** False: give up at once with this error (default: every error is retried). */
  retryable?(err: unknown): boolean;
  /** Told about each failure that will be retried. */
  onRetry?(err: unknown, attempt: number, delayMs: number): void;
}

/** Run `fn` until it resolves or fails with an error `retryable` refuses, waiting a growing delay (on `timers`) between tries. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  const delays = backoff(o.minMs, o.maxMs);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(o.retryable?.(err) ?? true)) throw err;
      const ms = delays.next();
      o.onRetry?.(err, attempt, ms);
      await sleep(o.timers, ms);
    }
  }
}
