// Segment summaries on worker threads: a year of segments is ~500k records at a few µs each, so the
// segments are walked on their own in parallel, and the chain walk then only links their ends
// (audit-segment.ts applySummary) and walks again the few a summary cannot vouch for.
import type { Worker } from 'node:worker_threads';
import { moduleWorker } from '../lib/worker.ts';
import type { SummariseJob, SummariseReply } from './audit-summarise-worker.ts';
import type { SegmentSummary } from './audit-segment.ts';

/** Bytes of segments per thread below which starting one costs more than it saves (~10k records). */
export const BYTES_PER_THREAD = 4 << 20;
const MAX_THREADS = 8;

/**
 * Threads worth starting for `bytes` of segments (0: walk on the calling thread): one per 4 MB, at most
 * one per core and 8, and none when the machine is already busy (1-minute load at or over the cores,
 * as `make -l` holds back): busy cores give more threads no more time, only more CPU to spend.
 */
export function threadsFor(bytes: number, cores: number, load: number): number {
  if (load >= cores) return 0;
  const n = Math.min(cores, MAX_THREADS, Math.floor(bytes / BYTES_PER_THREAD));
  return n >= 2 ? n : 0;
}

/**
 * Summaries of the segments `names` of `dir` (same order), walked on `threads` worker threads that
 * take segments from a shared counter, so a thread the scheduler holds back takes fewer and none waits
 * for this thread. An entry is undefined when its thread could not read it or failed: the chain walk
 * then walks that segment itself.
 */
export async function summariseInThreads(dir: string, names: string[], key: Uint8Array | null, threads: number): Promise<(SegmentSummary | null | undefined)[]> {
  const out: (SegmentSummary | null | undefined)[] = new Array(names.length).fill(undefined);
  const job: SummariseJob = { dir, names, key, next: new SharedArrayBuffer(4) };
  const run = (w: Worker) => new Promise<void>((resolve) => {
    w.on('message', (r: SummariseReply) => {
      if ('done' in r) resolve();
      else out[r.i] = r.summary;
    });
    // A thread that dies leaves the segments it took undefined (walked by the caller); the others carry on.
    w.on('error', () => resolve());
    w.on('exit', () => resolve());
  });
  const workers = Array.from({ length: Math.max(1, Math.min(threads, names.length)) }, () => moduleWorker(import.meta.url, 'audit-summarise-worker', { workerData: job }));
  try {
    await Promise.all(workers.map(run));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}
