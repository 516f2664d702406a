// The thread of start-scan.ts: `scanForStart` over the tree, telling the caller once the files are all there.
import { parentPort, workerData } from 'node:worker_threads';
import { createGit } from './git-cli.ts';
import { sddLayout } from './layout.ts';
import { scanForStart } from './recover.ts';
import type { ScanJob, ScanReply } from './start-scan.ts';

const job = workerData as ScanJob;
const scan = await scanForStart(sddLayout(job.root), createGit(job.root), job.head, {
  restore: job.restore,
  // The thread runs for a large board only (or when a test asks for it): it hands the EU AI Act folder to a thread of its own.
  ...(job.under ? { under: job.under } : { split: true }),
  ...(job.deletions ? { deletions: new Set(job.deletions) } : {}),
  ...(job.snapshot ? { snapshot: job.snapshot } : {}),
  later: job.later,
  onRestored: (paths) => parentPort!.postMessage({ restored: paths } satisfies ScanReply),
});
parentPort!.postMessage({ scan } satisfies ScanReply);
