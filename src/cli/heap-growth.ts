// How far V8 lets the old generation grow past what the last full GC kept, set by svc up. V8 reads
// `--heap-growing-percent` at every full GC, so it can follow the board's size as the server runs.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

const MiB = 1024 * 1024;

export interface GrowthRule {
  /** Growth never below this share of the live heap, per cent (default 10). */
  floorPercent: number;
  /** Growth of at least this many bytes (default 64 MiB) ... */
  headroom: number;
  /** ... while live heap plus growth stay under this (default 112 MiB); past it, the floor alone. */
  ceiling: number;
}

export const DEFAULT_GROWTH: GrowthRule = { floorPercent: 10, headroom: 64 * MiB, ceiling: 112 * MiB };

/**
 * The growth after a full GC that kept `live` bytes, in per cent: an absolute headroom, not a share. Every
 * request promotes some young objects (~3.5 KB a fused cycle); with 10% of a ~32 MiB heap a 10k board ran a
 * full GC every ~3,500 cycles (~0.3 s at W = 32), 5–15 ms each, and those pauses were much of the W = 32 p99.
 * 64 MiB spaces them ~19k cycles apart. The ceiling keeps a 100k board (~100 MiB live) at the 10% its peak RSS
 * was measured with: a ceiling of 192 MiB gave it 64 MiB more as well, and the peak went from 280 to 311 MiB
 * (target 300). Not V8's own rule (up to 4x): with it a 100k seed piled up 700 MiB of heap for 150 MiB live.
 */
export function growthPercent(live: number, rule: GrowthRule = DEFAULT_GROWTH): number {
  const floor = (live * rule.floorPercent) / 100;
  const grow = Math.max(floor, Math.min(rule.headroom, rule.ceiling - live));
  return Math.max(rule.floorPercent, Math.round((100 * grow) / Math.max(live, 1)));
}

/** True when the heap's size or growth was set on the command line or in NODE_OPTIONS: leave it alone. */
export function heapSetByUser(env: NodeJS.ProcessEnv, execArgv: readonly string[] = process.execArgv): boolean {
  return /--(max-old-space-size|heap-growing-percent)/.test([...execArgv, env.NODE_OPTIONS ?? ''].join(' '));
}

/** Set the growth to `percent` now (unless the user set the heap's size or growth). */
export function setHeapGrowth(env: NodeJS.ProcessEnv, percent: number): void {
  if (!heapSetByUser(env)) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * From now on, after every full GC, the growth `growthPercent` gives for what it kept; the first from the heap
 * now. Returns a stop function. A no-op when the user set the heap's size or growth.
 */
export function followHeapGrowth(env: NodeJS.ProcessEnv, rule: GrowthRule = DEFAULT_GROWTH): () => void {
  if (heapSetByUser(env)) return () => undefined;
  let last = -1;
  const apply = () => {
    const percent = growthPercent(getHeapStatistics().used_heap_size, rule);
    if (percent !== last) setFlagsFromString(`--heap-growing-percent=${(last = percent)}`);
  };
  apply();
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) apply();
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
