// Where an append log's batch is datasynced: on the event loop or on the thread pool (append-log.ts).

/**
 * On the event loop (fdatasyncSync) while the disk answers fast, as Redis's appendfsync always does: a
 * thread-pool hop costs the loop more than a fast datasync (on a 2-vCPU VM ~60 µs of the loop per hop, and
 * the answer waits for the loop's next turn: a median of ~1.2 ms under load, against ~0.15 ms inline).
 * On a slow disk (the median of the last `window` inline datasyncs at `slowUs` or more) a batch of more than
 * `inlineUpTo` items goes to the thread pool, so the loop parses the next batch meanwhile; every
 * `probeEvery`-th of those is datasynced inline again, so a disk that recovers is noticed. A median, not a
 * mean: a shared disk stalls now and then (inline p50 0.3 ms with a p99 of 3–7 ms and 23 ms at worst, measured
 * at W = 32), and a mean that a stall pushed over 1 ms sent a third of the batches to the pool, each answer
 * 1.3 ms late. Pure: the caller times each inline datasync.
 */
export class DatasyncPolicy {
  private readonly recent: Float64Array;
  private readonly scratch: Float64Array;
  private count = 0;
  private next = 0;
  private medianUs = 0;
  private deferred = 0;

  constructor(private readonly o: { slowUs: number; inlineUpTo: number; probeEvery: number; window: number } = { slowUs: 1000, inlineUpTo: 2, probeEvery: 32, window: 31 }) {
    this.recent = new Float64Array(o.window);
    this.scratch = new Float64Array(o.window);
  }

  /** Datasync a batch of `items` on the event loop (else on the thread pool). */
  inline(items: number): boolean {
    if (items <= this.o.inlineUpTo || this.medianUs < this.o.slowUs) return true;
    return ++this.deferred % this.o.probeEvery === 0;
  }

  /** An inline datasync took `us` microseconds. */
  took(us: number): void {
    this.recent[this.next] = us;
    this.next = (this.next + 1) % this.o.window;
    this.count = Math.min(this.count + 1, this.o.window);
    // The lower median: of a slow first datasync (a cold file) and a fast second one, the fast one.
    const sorted = this.scratch.subarray(0, this.count);
    sorted.set(this.recent.subarray(0, this.count));
    this.medianUs = sorted.sort()[(this.count - 1) >> 1]!;
  }

  /** The median of the last `window` inline datasyncs, µs (0 before the first). */
  get typicalUs(): number {
    return this.medianUs;
  }
}
