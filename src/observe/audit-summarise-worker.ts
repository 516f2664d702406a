// A worker thread of audit-summarise.ts: reads the segment files it is handed and walks each on its own.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { summariseSegment, type SegmentSummary } from './audit-walk.ts';

/** Walk segment `i` at `path`. */
export interface SummariseRequest { i: number; path: string }
/** Its summary; null when it needs the chain walk; undefined when the file could not be read here. */
export interface SummariseReply { i: number; summary: SegmentSummary | null | undefined }

const key = (workerData as { key: Uint8Array | null }).key;
parentPort?.on('message', (m: SummariseRequest) => {
  let summary: SegmentSummary | null | undefined;
  try {
    summary = summariseSegment(key, readFileSync(m.path, 'utf8'));
  } catch {
    summary = undefined; // the chain walk reads the file again and reports what is wrong
  }
  parentPort?.postMessage({ i: m.i, summary } satisfies SummariseReply);
});
