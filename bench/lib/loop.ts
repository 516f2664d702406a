// The measured loop shared by both systems: W workers each repeat "take next → complete" until empty.
import { performance } from 'node:perf_hooks';

/** One worker's two steps: `next` returns a handle or undefined when the queue is empty. */
export interface CycleSteps<H> {
  next(worker: number): Promise<H | undefined>;
  complete(worker: number, handle: H): Promise<void>;
  /** The handle the last complete already brought (a fused cycle), taken without a request; else undefined. */
  prefetched?(worker: number): H | undefined;
}

export interface LoopResult {
  cycles: number;
  seconds: number;
  /** Latency of every request (next and complete; a fused cycle has no separate next), ms. */
  latencies: number[];
  /** True when the time or cycle cap stopped the loop before the queue was empty. */
  capped: boolean;
}

/** Run `workers` concurrent loops until every one saw an empty queue (or `capSeconds` passed, or `maxCycles` were started). */
export async function runLoop<H>(steps: CycleSteps<H>, workers: number, capSeconds = Infinity, maxCycles = Infinity): Promise<LoopResult> {
  const latencies: number[] = [];
  let cycles = 0;
  let capped = false;
  let started = 0;
  const start = performance.now();
  const deadline = start + capSeconds * 1000;
  const worker = async (w: number) => {
    for (;;) {
      if (performance.now() > deadline || started >= maxCycles) { capped = true; return; }
      started++;
      let t = performance.now();
      let handle = steps.prefetched?.(w);
      if (handle === undefined) {
        handle = await steps.next(w);
        latencies.push(performance.now() - t);
      }
      if (handle === undefined) return;
      t = performance.now();
      await steps.complete(w, handle);
      latencies.push(performance.now() - t);
      cycles++;
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return { cycles, seconds: (performance.now() - start) / 1000, latencies, capped };
}
