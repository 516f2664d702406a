import { isIP } from 'node:net';
import type { Clock } from '../lib/clock.ts';

/** What a limiter says about one request (the original's `{allowed, retryAfterSec?, count, limit}`). */
export interface Decision {
  allowed: boolean;
  /** Seconds until the oldest kept request leaves the window; set when denied. */
  retryAfterSec?: number;
  /** Requests counted in the window, this one included when allowed. */
  count: number;
  limit: number;
}

/**
 * Pure sliding-window step: drop timestamps older than the window, then admit (and record `now`) while
 * fewer than `limit` remain. A denied request is not recorded, so hammering does not extend the wait.
 */
export function slide(stamps: readonly number[], now: number, limit: number, windowMs: number): { stamps: number[]; decision: Decision } {
  const kept = stamps.filter((t) => t > now - windowMs);
  if (kept.length >= limit) {
    const wait = Math.ceil(((kept[0] ?? now) + windowMs - now) / 1000);
    return { stamps: kept, decision: { allowed: false, retryAfterSec: Math.max(1, wait), count: kept.length, limit } };
  }
  kept.push(now);
  return { stamps: kept, decision: { allowed: true, count: kept.length, limit } };
}

/** An in-memory per-key sliding window limiter. */
export interface WindowLimiter {
  readonly limit: number;
  readonly windowMs: number;
  check(key: string): Decision;
  /** Keys currently tracked (bounded by `maxKeys`). */
  readonly size: number;
}

/**
 * Per-key windows in memory (per process, as the contract says). At `maxKeys` expired keys are dropped
 * first, then the least recently used: memory stays bounded under a flood of addresses.
 */
export function createWindowLimiter(opts: { limit: number; windowMs: number; clock: Clock; maxKeys?: number }): WindowLimiter {
  const windows = new Map<string, number[]>();
  const maxKeys = opts.maxKeys ?? 100_000;
  const prune = (now: number) => {
    for (const [k, s] of windows) if ((s[s.length - 1] ?? 0) <= now - opts.windowMs) windows.delete(k);
    for (const k of windows.keys()) {
      if (windows.size < maxKeys) break;
      windows.delete(k);
    }
  };
  return {
    limit: opts.limit,
    windowMs: opts.windowMs,
    get size() { return windows.size; },
    check(key) {
      const now = opts.clock.now();
      const prev = windows.get(key);
      if (!prev && windows.size >= maxKeys) prune(now);
      const step = slide(prev ?? [], now, opts.limit, opts.windowMs);
      // Re-insert so Map order is least recently used first.
      windows.delete(key);
      windows.set(key, step.stamps);
      return step.decision;
    },
  };
}

// Expand an IPv6 text into its eight 16-bit groups (embedded IPv4 included); null when not IPv6.
function ipv6Groups(ip: string): number[] | null {
  if (isIP(ip) !== 6) return null;
  let text = ip.split('%')[0]!;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/**
 * The limiter key of a client address: IPv4 as is, IPv6 by its /64 (one subscriber's whole prefix),
 * so rotating through the addresses of one network never buys a fresh budget.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const g = ipv6Groups(ip);
  if (!g) return ip || 'unknown';
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}
