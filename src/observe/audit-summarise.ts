// Segment summaries on several threads: a year of segments is ~500k records at a couple of µs each, so
// the segments are walked on their own in parallel (this thread among them), and the chain walk then only
// links their ends (audit-segment.ts applySummary) and walks again the few a summary cannot vouch for.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { moduleWorker } from '../lib/worker.ts';
import type { SummariseReply } from './audit-summarise-worker.ts';
import { summariseSegment, type SegmentSummary } from './audit-segment.ts';

/** Bytes of segments per thread below which starting one costs more than it saves (~10k records). */
export const BYTES_PER_THREAD = 4 << 20;
const MAX_THREADS = 8;

/**
 * Threads worth walking `bytes` of segments on, this one included (0: this thread alone): one per 4 MB,
 * at most one per core and 8, and none when the machine is already busy (1-minute load at or over the
 * cores, as `make -l` holds back): busy cores give more threads no more time, only more CPU to spend.
 */
export function threadsFor(bytes: number, cores: number, load: number): number {
  if (load >= cores) return 0;
  const n = Math.min(cores, MAX_THREADS, Math.floor(bytes / BYTES_PER_THREAD));
  return n >= 2 ? n : 0;
}

/** What a thread is given: the segments, the key, and the counter (Int32Array over shared memory) of the next one to take. */
export interface SummariseJob { dir: string; names: string[]; key: Uint8Array | null; next: SharedArrayBuffer }

/**
 * Take segments from the job's counter until none is left, summarising each (undefined when it cannot be
 * read here: the chain walk reads it again and says why). Each thread runs this, the caller's included.
 */
export function takeSegments(job: SummariseJob, done: (i: number, summary: SegmentSummary | null | undefined) => void): void {
  const next = new Int32Array(job.next);
  for (let i = Atomics.add(next, 0, 1); i < job.names.length; i = Atomics.add(next, 0, 1)) {
    let summary: SegmentSummary | null | undefined;
    try {
      summary = summariseSegment(job.key, readFileSync(join(job.dir, job.names[i]!)));
    } catch {
      summary = undefined;
    }
    done(i, summary);
  }
}

/**
 * Summaries of the segments `names` of `dir` (same order), walked by this thread and `threads - 1` worker
 * threads taking segments from a shared counter, so a thread that starts late or is held back takes
 * fewer and none waits for another. An entry is undefined when its thread could not read it or failed:
 * the chain walk then walks that segment itself.
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
  const workers = Array.from({ length: Math.max(0, Math.min(threads, names.length) - 1) }, () => moduleWorker(import.meta.url, 'audit-summarise-worker', { workerData: job }));
  const finished = workers.map(run);
  try {
    // While the workers start, this thread is already walking.
    takeSegments(job, (i, s) => { out[i] = s; });
    await Promise.all(finished);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}
