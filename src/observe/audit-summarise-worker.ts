// A worker thread of audit-summarise.ts: takes the next segment from the shared counter, walks it on
// its own, posts its summary; no round trip through the main thread between segments.
import { parentPort, workerData } from 'node:worker_threads';
import type { SegmentSummary } from './audit-segment.ts';
import { takeSegments, type SummariseJob } from './audit-summarise.ts';

/** Segment `i`'s summary (null: it needs the chain walk; undefined: unreadable here), or `done` after the last. */
export type SummariseReply = { i: number; summary: SegmentSummary | null | undefined } | { done: true };

takeSegments(workerData as SummariseJob, (i, summary) => parentPort?.postMessage({ i, summary } satisfies SummariseReply));
parentPort?.postMessage({ done: true } satisfies SummariseReply);
