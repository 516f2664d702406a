// Where an append log's batch is datasynced: on the event loop or on the thread pool (append-log.ts).

/**
 * On the event loop (fdatasyncSync) while the disk answers fast, as Redis's appendfsync always does: a
 * thread-pool hop costs the loop more than a fast datasync (on a 2-vCPU VM ~60 µs of the loop per hop, and
 * the answer waits for the loop's next turn: a median of ~1.2 ms under load, against ~0.15 ms inline).
 * On a slow disk (inline datasyncs averaging `slowUs` or more) a batch of more than `inlineUpTo` items goes to
 * the thread pool, so the loop parses the next batch meanwhile; every `probeEvery`-th of those is datasynced
 * inline again, so a disk that recovers is noticed. Pure: the caller times each inline datasync.
 */
export class DatasyncPolicy {
  private avgUs = 0;
  private deferred = 0;
  private samples = 0;

  constructor(private readonly o: { slowUs: number; inlineUpTo: number; probeEvery: number } = { slowUs: 1000, inlineUpTo: 2, probeEvery: 32 }) {}

  /** Datasync a batch of `items` on the event loop (else on the thread pool). */
  inline(items: number): boolean {
    if (items <= this.o.inlineUpTo || this.avgUs < this.o.slowUs) return true;
    return ++this.deferred % this.o.probeEvery === 0;
  }

  /**
   * An inline datasync took `us` microseconds. The plain mean of the first twenty (a slow first datasync of a
   * cold file does not linger), then an exponential average that moves slowly (one stall is no slow disk).
   */
  took(us: number): void {
    this.samples++;
    this.avgUs += (us - this.avgUs) * Math.max(0.05, 1 / this.samples);
  }

  /** The running average of inline datasyncs, µs (0 before the first). */
  get averageUs(): number {
    return this.avgUs;
  }
}
