// The one append-only file writer: batches (group commit), whole-batch truncate on failure, torn-line seal.
import { fdatasync, fdatasyncSync, ftruncateSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { mkdir, open, rename, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isMissing, storageError, type Faults } from './disk.ts';
import { syncDir } from './atomic.ts';
import { DatasyncPolicy } from './datasync-policy.ts';
import { dataEnd, zeroFill } from './prealloc.ts';
import { utf8Bound, utf8Length, writeUtf8 } from '../lib/utf8.ts';

/** Hooks of an AppendLog; they run inside its one writing loop, so in batch order. */
export interface AppendLogOptions<T> {
  /** The text of a batch, whole or in pieces, built when the batch is formed (default: the items, which are strings). */
  encode?(items: T[]): string | readonly string[];
  /** The batch is on disk (and datasynced when durable); runs before its writers are answered. */
  written?(items: T[]): void;
  /** The batch was refused (nothing of it stays in the file); runs before its writers are answered. */
  refused?(items: T[], err: unknown): void;
  /** One datasync per batch, and the folder synced when the file is created (default true). */
  durable?: boolean;
  /**
   * Keep this many bytes of zeros written past the data (prealloc.ts): a batch then overwrites bytes the
   * file already has, and its datasync has no new size to record. Readers stop at the first NUL.
   */
  preallocate?: number;
  faults?: Faults;
}

/** One append-only file: items queued in one turn of the event loop go out together, in queue order. */
export interface AppendLog<T = string> {
  /** Resolves once the item's batch is on disk; rejects (StorageUnavailable for disk trouble) when refused. */
  append(item: T): Promise<void>;
  /** Between two batches: close the file and rename it to `to` (absent file: nothing); the next batch starts a new one. */
  rotate(to: string): Promise<void>;
  /** Resolves when nothing is queued or being written (never rejects). */
  drain(): Promise<void>;
  /** Write what is queued, then close; later appends are refused. */
  close(): Promise<void>;
  /** Bytes written through this log. */
  readonly written: number;
}

const datasync = promisify(fdatasync);

type Job<T> = { item: T; resolve(): void; reject(err: unknown): void } | { between(): Promise<void>; resolve(): void; reject(err: unknown): void };

/** An AppendLog on `abs` (opened on the first batch; parent folders created on demand). */
export function appendLog<T = string>(abs: string, o: AppendLogOptions<T> = {}): AppendLog<T> {
  const durable = o.durable ?? true;
  const encode = o.encode ?? ((items: T[]) => items as unknown as string[]);
  let fh: FileHandle | undefined;
  const pre = o.preallocate ?? 0;
  let size = 0; // bytes known to be good: a refused batch is truncated back to here
  let cap = 0; // preallocated: the file's length (zeros from `size` on)
  let seal = false; // the file ends inside a line (a crash, or a failed truncate): start the next batch with '\n'
  let total = 0;
  let queue: Job<T>[] = [];
  let running: Promise<void> | undefined;
  let closed = false;
  const policy = new DatasyncPolicy();

  const openFile = async () => {
    const created = !(await stat(abs).catch(() => undefined));
    // Preallocated: written at offsets (no O_APPEND), and whatever follows the data is dropped.
    const flags = pre ? (created ? 'w+' : 'r+') : 'a+';
    const h = await open(abs, flags, 0o644).catch(async (err: unknown) => {
      if (!isMissing(err)) throw err;
      await mkdir(dirname(abs), { recursive: true });
      return open(abs, pre ? 'w+' : 'a+', 0o644);
    });
    size = (await h.stat()).size;
    if (pre) await h.truncate((cap = size = dataEnd(h.fd, size)));
    seal = size > 0 && !(await endsWithNewline(h, size));
    if (created && durable) await syncDir(dirname(abs)); // the file's own name must survive a power loss
    return h;
  };

  const writeBatch = async (jobs: { item: T; resolve(): void; reject(err: unknown): void }[]) => {
    const items = jobs.map((j) => j.item);
    let n = 0;
    try {
      const data = encode(items);
      fh ??= await openFile();
      o.faults?.beforeWrite?.(abs);
      const pieces = typeof data === 'string' ? [data] : data;
      const buf = bytesOf(seal ? ['\n', ...pieces] : pieces);
      n = buf.length;
      // A short write is rare on a regular file but possible (ENOSPC half-way): finish or throw.
      // The write is synchronous (to the page cache, microseconds); the datasync too while the disk is
      // fast, else a batch of several clients' changes goes to the thread pool (datasync-policy.ts).
      if (pre && size + n > cap) {
        zeroFill(fh.fd, Math.max(cap, size + n), size + n + pre); // synced below, with the batch
        cap = size + n + pre;
      }
      for (let off = 0; off < n;) off += writeSync(fh.fd, buf, off, n - off, pre ? size + off : null);
      if (durable && policy.inline(jobs.length)) {
        const t0 = performance.now();
        fdatasyncSync(fh.fd);
        policy.took((performance.now() - t0) * 1000);
      } else if (durable) await datasync(fh.fd);
    } catch (err) {
      await takeBack();
      o.refused?.(items, err);
      const e = storageError(err, abs);
      for (const j of jobs) j.reject(e);
      return;
    }
    size += n;
    total += n;
    seal = false;
    o.written?.(items);
    for (const j of jobs) j.resolve();
  };
  // Cut a refused batch off; if that fails too, reopen next time (size and the torn-line seal re-read).
  const takeBack = async () => {
    if (!fh) return;
    try {
      ftruncateSync(fh.fd, size);
      cap = size;
    } catch {
      const h = fh;
      fh = undefined;
      await h.close().catch(() => undefined);
    }
  };

  const run = async () => {
    while (queue.length) {
      const head = queue[0]!;
      if ('between' in head) {
        queue.shift();
        await head.between().then(head.resolve, head.reject);
        continue;
      }
      const cut = queue.findIndex((j) => 'between' in j);
      const jobs = queue.splice(0, cut < 0 ? queue.length : cut) as { item: T; resolve(): void; reject(err: unknown): void }[];
      await writeBatch(jobs);
    }
    running = undefined;
  };
  // The loop starts after the I/O phase of the event loop: every request read in it joins the batch.
  const enqueue = (job: Job<T>) => {
    queue.push(job);
    running ??= new Promise<void>((resolve) => setImmediate(() => { void run().then(resolve); }));
  };
  const between = (fn: () => Promise<void>) => new Promise<void>((resolve, reject) => enqueue({ between: fn, resolve, reject }));
  const closeFile = async () => {
    const h = fh;
    fh = undefined;
    await h?.close();
  };

  return {
    append: (item) => new Promise<void>((resolve, reject) => {
      if (closed) { reject(new Error(`append log closed: ${abs}`)); return; }
      enqueue({ item, resolve, reject });
    }),
    rotate: (to) => between(async () => {
      await closeFile();
      await rename(abs, to).catch((err: unknown) => { if (!isMissing(err)) throw err; });
      size = cap = 0;
      seal = false;
    }),
    drain: async () => { while (running) await running; },
    close: () => {
      closed = true;
      return between(closeFile);
    },
    get written() { return total; },
  };
}

// One buffer reused by every batch of every log (a batch is written synchronously, before the next is
// encoded): a batch's pieces are copied into it, no joined string and no buffer per batch. A batch larger
// than this (a bulk create) gets a buffer of its own.
const SCRATCH = 1024 * 1024;
let scratch: Buffer | undefined;

// The UTF-8 bytes of `pieces`, in the shared scratch buffer when they fit (valid until the next call).
function bytesOf(pieces: readonly string[]): Buffer {
  let max = utf8Bound(pieces);
  if (max > SCRATCH) max = utf8Length(pieces); // counted exactly only when the bound is too large
  const buf = max <= SCRATCH ? (scratch ??= Buffer.allocUnsafeSlow(SCRATCH)) : Buffer.allocUnsafeSlow(max);
  return buf.subarray(0, writeUtf8(buf, 0, pieces));
}

/** True when the last byte of an open file is a newline. */
export async function endsWithNewline(fh: FileHandle, size: number): Promise<boolean> {
  const buf = Buffer.alloc(1);
  await fh.read(buf, 0, 1, size - 1);
  return buf[0] === 0x0a;
}
