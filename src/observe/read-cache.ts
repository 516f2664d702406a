/**
 * Snapshots of /status, /dashboard/data and /slo (serialised bodies), reused while the board has not
 * changed and for at most one second (ages and uptimes move with time). Hits and misses are counted:
 * `/status` reports their ratio as `metrics.cache_hit_rate`.
 */
export class ReadCache {
  hits = 0;
  misses = 0;
  private entries = new Map<string, { version: string; body: string }>();

  constructor(private readonly onLookup: (hit: boolean) => void = () => undefined, private readonly maxEntries = 64) {}

  /** The body stored under `key` for `version`, else `build()` stored and returned. */
  get(key: string, version: string, build: () => unknown): string {
    const e = this.entries.get(key);
    if (e && e.version === version) {
      this.hits++;
      this.onLookup(true);
      return e.body;
    }
    this.misses++;
    this.onLookup(false);
    const body = JSON.stringify(build());
    this.entries.delete(key);
    this.entries.set(key, { version, body });
    // Oldest key first out (Map keeps insertion order; a rebuilt key moved to the end above).
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return body;
  }

  /** Hit rate with the counts it comes from (0 before the first lookup). */
  stats(): { cache_hit_rate: number; cache_hits: number; cache_misses: number; cache_lookups: number } {
    const n = this.hits + this.misses;
    return { cache_hit_rate: n ? Math.round((this.hits / n) * 10_000) / 10_000 : 0, cache_hits: this.hits, cache_misses: this.misses, cache_lookups: n };
  }
}
