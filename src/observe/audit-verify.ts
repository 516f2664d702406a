// Verification of the audit chain: every segment in filename order, every link, every HMAC (the HMACs
// only with the key; without it, in a clone, the hash links `seq` and `prev` are all that can be checked).
// Big logs are walked segment by segment on several threads first (audit-summarise.ts); the chain walk
// then links the segments' ends and walks again only those a summary cannot vouch for, so the verdict,
// the first broken link and the warnings are the ones a walk on one thread gives.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import type { SddLayout } from '../store/layout.ts';
import { listSegments } from './audit.ts';
import { loadAuditKey } from './audit-key.ts';
import { summariseInThreads, threadsFor } from './audit-summarise.ts';
import { applySummary, walkSegment, type SegmentSummary } from './audit-segment.ts';
import { finishWalk, startWalk, type AuditBreak, type AuditVerifyResult, type ChainWalk } from './audit-walk.ts';

export { applySummary, summariseSegment, walkSegment } from './audit-segment.ts';
export type { SegmentSummary } from './audit-segment.ts';
export { finishWalk, startWalk } from './audit-walk.ts';
export type { AuditBreak, AuditBreakReason, AuditVerifyResult, AuditWarning, ChainWalk } from './audit-walk.ts';

/** One segment to verify: its file name and text. */
export interface AuditSegment {
  name: string;
  text: string;
}

/**
 * Verify every segment of `.sdd/audit/` (or the `segments` given, e.g. read from refs/sdd/state).
 * `key: null` checks the links only (a clone has no `.sdd/secrets/audit.key`); without `key` the key
 * file is read, and an unusable one throws AuditKeyError when there are records. `threads` overrides
 * how many threads walk segments, this one included (default: by size, cores and load; 0 or 1: this one alone).
 */
export async function verifyAudit(layout: SddLayout, opts: { key?: Uint8Array | null; segments?: AuditSegment[]; threads?: number } = {}): Promise<AuditVerifyResult> {
  if (opts.segments) return verifyTexts(layout, opts.segments, opts.key);
  const dir = layout.auditDir;
  const names = await listSegments(dir);
  const sizes = await segmentSizes(dir, names);
  // The key is needed as soon as one segment holds anything (as when reading them one by one).
  const key = opts.key !== undefined ? opts.key : sizes.some((s) => s > 0) ? await loadAuditKey(layout, { create: false }) : null;
  const { w } = await walkSegmentFiles(dir, names, key, { sizes, threads: opts.threads });
  return finishWalk(w, names.length, opts.key !== null);
}

async function verifyTexts(layout: SddLayout, segments: AuditSegment[], given: Uint8Array | null | undefined): Promise<AuditVerifyResult> {
  const w = startWalk();
  let key = given;
  for (const { name, text } of segments) {
    if (text === '') continue;
    if (key === undefined) key = await loadAuditKey(layout, { create: false });
    walkSegment(key, w, name, text);
    if (w.broken) break;
  }
  return finishWalk(w, segments.length, key !== null);
}

/** Where a walk over segment files ended, and the summary of each segment it passed cleanly (to remember). */
export interface SegmentFilesWalk {
  w: ChainWalk;
  clean: Map<string, SegmentSummary>;
}

/**
 * Walk the segment files `names` of `dir` in order. A segment's summary comes from `known` (remembered
 * by the caller), else from several threads (this one and workers) when the segments to walk are big
 * enough; segments without a usable summary are read and walked here. Stops at the first broken link.
 */
export async function walkSegmentFiles(dir: string, names: string[], key: Uint8Array | null, o: { known?: Map<string, SegmentSummary>; sizes?: number[]; threads?: number } = {}): Promise<SegmentFilesWalk> {
  const todo = names.map((n, i) => (o.known?.has(n) ? -1 : i)).filter((i) => i >= 0);
  let threads = o.threads;
  if (threads === undefined) {
    const sizes = o.sizes ?? await segmentSizes(dir, names);
    threads = threadsFor(todo.reduce((t, i) => t + (sizes[i] ?? 0), 0), availableParallelism(), loadavg()[0] ?? 0);
  }
  const threaded = new Map<string, SegmentSummary | null | undefined>();
  if (threads >= 2 && todo.length > 0) {
    const got = await summariseInThreads(dir, todo.map((i) => names[i]!), key, threads);
    todo.forEach((i, j) => threaded.set(names[i]!, got[j]));
  }
  const w = startWalk();
  const clean = new Map<string, SegmentSummary>();
  for (const name of names) {
    const s = o.known?.get(name) ?? threaded.get(name);
    if (s && applySummary(w, s)) { clean.set(name, s); continue; }
    // One synchronous read per segment: the walk of it is synchronous anyway, and 365 async reads cost more.
    const text = readFileSync(join(dir, name));
    if (text.length === 0) continue;
    const from = { seq: w.seq, hmac: w.hmac, records: w.records, warnings: w.warnings.length };
    walkSegment(key, w, name, text);
    if (w.broken) break;
    // Only a segment that ends cleanly (no unreadable line waiting to be linked over) is remembered.
    if (w.pending.length === 0 && w.warnings.length === from.warnings) {
      clean.set(name, { records: w.records - from.records, firstSeq: from.seq + 1, firstPrev: from.hmac, lastSeq: w.seq, lastHmac: w.hmac });
    }
  }
  return { w, clean };
}

/** Each segment's size in bytes (0 when it cannot be read: the walk reads it and says why). */
export function segmentSizes(dir: string, names: string[]): Promise<number[]> {
  return Promise.all(names.map((n) => stat(join(dir, n)).then((s) => s.size, () => 0)));
}

/** One line for people: `.sdd/audit/2026-01-02.jsonl line 7 (seq 42): hmac mismatch: …`. */
export function formatAuditBreak(b: AuditBreak): string {
  return `.sdd/audit/${b.file} line ${b.line}${b.seq === null ? '' : ` (seq ${b.seq})`}: ${b.reason}: ${b.detail}`;
}
