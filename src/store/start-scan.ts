// The start's comparison of `.sdd` with refs/sdd/state on a thread of its own (start-scan-worker.ts): on a
// large board the ref's listing, the folder walk and a stat per file cost the event loop more than a second
// while it parses the board (bench/README.md "start").
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { moduleWorker } from '../lib/worker.ts';
import type { RecoverOptions } from './committer-types.ts';
import type { SddLayout } from './layout.ts';
import type { StartScan } from './recover.ts';

/** What the thread is asked: `scanForStart` over the tree at `root`. */
export interface ScanJob { root: string; head: string | null; restore: boolean; deletions: string[] | null; snapshot: string | null; under: string | null; later: boolean }
/** The thread says when the files are all there (restored), then what it found. */
export type ScanReply = { restored: readonly string[] } | { scan: StartScan };

// Below this many task files the thread's own start (~50 ms, more under tsx) costs more than it saves.
const THREAD_FROM_TASKS = 20_000;

/**
 * A board worth a thread, estimated from a few listings: shard folders × the files of the first one.
 * `SVC_TEST_LARGE_BOARD=1` says yes for any board (tests of a large board's start, without 20,000 tasks).
 */
export function largeBoard(layout: SddLayout): boolean {
  if (process.env.SVC_TEST_LARGE_BOARD === '1') return true;
  let shards: string[];
  try {
    shards = readdirSync(layout.tasksDir).filter((n) => !n.startsWith('.'));
  } catch {
    return false;
  }
  for (const shard of shards.slice(0, 3)) {
    try {
      return shards.length * readdirSync(join(layout.tasksDir, shard)).length >= THREAD_FROM_TASKS;
    } catch { /* not a folder: the next one */ }
  }
  return false;
}

/** A comparison running on its thread: when the files are all there (restored), and what it found. */
export interface ThreadScan { restored: Promise<readonly string[]>; scan: Promise<StartScan> }

/** `scanForStart` on a thread of its own (`under`: of that top-level folder only). */
export function scanOnThread(layout: SddLayout, head: string | null, o: Pick<RecoverOptions, 'deletions' | 'restore' | 'snapshot' | 'later'> & { under?: string }): ThreadScan {
  const job: ScanJob = { root: layout.root, head, restore: o.restore ?? false, deletions: o.deletions ? [...o.deletions] : null, snapshot: o.snapshot ?? null, under: o.under ?? null, later: o.later ?? false };
  let restoredNow!: (paths: readonly string[]) => void;
  const restored = new Promise<readonly string[]>((resolve) => { restoredNow = resolve; });
  const scan = new Promise<StartScan>((resolve, reject) => {
    // A small young generation, as the publisher's: the default (16 MiB semi-spaces) adds ~30 MiB of RSS at the start's peak.
    const worker = moduleWorker(import.meta.url, 'start-scan-worker', { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
    worker.on('message', (m: ScanReply) => {
      if ('restored' in m) restoredNow(m.restored);
      else resolve(m.scan);
    });
    worker.on('error', reject);
    // After the answer this changes nothing; before it, the thread died without one.
    worker.on('exit', (code) => reject(new Error(`the start's scan thread exited (${code}) without an answer`)));
  });
  scan.catch(() => undefined); // surfaces where it is awaited
  return { restored, scan };
}

/** The start's comparison begun before the server's modules load (start-early.ts). */
export interface EarlyScan extends ThreadScan { job: Pick<ScanJob, 'head' | 'deletions' | 'snapshot' | 'later'> }

/** Whether `early` is the comparison these options ask for (else it is left to finish and not used). */
export function earlyMatches(early: EarlyScan, head: string | null, o: Pick<RecoverOptions, 'deletions' | 'restore' | 'snapshot' | 'later'>): boolean {
  const asked = [...(o.deletions ?? [])].sort();
  return early.job.head === head && o.restore === true && (o.snapshot ?? null) === early.job.snapshot && early.job.later === (o.later ?? false)
    && asked.length === (early.job.deletions ?? []).length && [...(early.job.deletions ?? [])].sort().every((d, i) => d === asked[i]);
}
