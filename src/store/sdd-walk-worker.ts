// The thread of sdd-walk.ts's `aside` folders: walked and stat'ed, the stamps' buffers handed over.
import { parentPort, workerData } from 'node:worker_threads';
import { walkSdd, type WalkReply } from './sdd-walk.ts';

const job = workerData as { base: string; stat: boolean; roots: string[] };
const walk = await walkSdd(job.base, { stat: job.stat, roots: job.roots });
const reply: WalkReply = { files: walk.files, litter: walk.litter, size: walk.stamps?.size ?? null, changed: walk.stamps?.changed ?? null };
parentPort!.postMessage(reply, walk.stamps ? [walk.stamps.size.buffer as ArrayBuffer, walk.stamps.changed.buffer as ArrayBuffer] : []);
