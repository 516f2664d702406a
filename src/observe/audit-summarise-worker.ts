// A worker thread of audit-summarise.ts: takes the next segment from the shared counter, walks it on
// its own, posts its summary; no round trip through the main thread between segments.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { summariseSegment, type SegmentSummary } from './audit-segment.ts';

/** What a thread is given: the segments, the key, and the counter (Int32Array over shared memory) of the next one to take. */
export interface SummariseJob { dir: string; names: string[]; key: Uint8Array | null; next: SharedArrayBuffer }
/** Segment `i`'s summary (null: it needs the chain walk; undefined: unreadable here), or `done` after the last. */
export type SummariseReply = { i: number; summary: SegmentSummary | null | undefined } | { done: true };

const job = workerData as SummariseJob;
const next = new Int32Array(job.next);
for (let i = Atomics.add(next, 0, 1); i < job.names.length; i = Atomics.add(next, 0, 1)) {
  let summary: SegmentSummary | null | undefined;
  try {
    summary = summariseSegment(job.key, readFileSync(join(job.dir, job.names[i]!)));
  } catch {
    summary = undefined; // the chain walk reads the file again and reports what is wrong
  }
  parentPort?.postMessage({ i, summary } satisfies SummariseReply);
}
parentPort?.postMessage({ done: true } satisfies SummariseReply);
