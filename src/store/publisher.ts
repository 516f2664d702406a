import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../lib/log.ts';
import { storageError, type Faults } from './io.ts';
import type { PublishReply, PublishRequest } from './publish-worker.ts';

/**
 * Write-behind of journaled record texts onto their files (temp + rename, no fsync: the journal holds
 * them until a checkpoint has made the files durable), on a thread of its own (publish-worker.ts).
 * Writes to one path coalesce: a file written twice before its turn is written once, with the newer text.
 */
export interface Publisher {
  /** `abs` must become `text` (null: deleted); its journal line is on disk already. */
  put(abs: string, text: string | null): void;
  /** The text waiting for `abs` (null: a delete), or undefined when its file is up to date. */
  peek(abs: string): string | null | undefined;
  /** Resolves once everything put before the call is on its file; rejects if a round failed on it. */
  flush(): Promise<void>;
  /** Resolves once the backlog is under the high-water mark (writers wait here: memory stays bounded). */
  room(): Promise<void>;
  readonly backlog: number;
  /** Publish everything (one try when the disk fails: the journal keeps the rest for replay). */
  close(): Promise<void>;
}

export interface PublisherOptions {
  log: Logger;
  faults?: Faults;
  /** Most files handed to the writer thread in one message (default 256). */
  chunk?: number;
  /** Backlog at which `room()` starts to wait (default 20,000 paths). */
  highWater?: number;
  /**
   * A text waits this long before its file is written (default 50 ms), so a record written again
   * soon after (claim, then progress or complete) costs one file write, not two.
   */
  delayMs?: number;
}

interface Entry { text: string | null; seq: number; at: number }
interface Waiter { seq: number; resolve(): void; reject(err: unknown): void }

export function createPublisher(o: PublisherOptions): Publisher {
  const chunk = o.chunk ?? 256;
  const highWater = o.highWater ?? 20_000;
  const delayMs = o.delayMs ?? 50;
  const pending = new Map<string, Entry>();
  let seq = 0;
  let running: Promise<void> | undefined;
  let flushers: Waiter[] = [];
  let roomWaiters: (() => void)[] = [];
  let retryMs = 0;
  let closing = false;

  // The writer thread, started on first use; a crash of it fails the round, the next round starts another.
  let worker: Worker | undefined;
  let nextId = 0;
  const replies = new Map<number, { resolve(r: PublishReply): void; reject(err: unknown): void }>();
  const thread = (): Worker => {
    if (worker) return worker;
    // .js when built; .ts from source under tsx (dev, tests): Node 20 does not pass the loader to a
    // worker, so a one-line bootstrap registers it before importing the worker module.
    const ext = extname(fileURLToPath(import.meta.url));
    const url = new URL(`./publish-worker${ext}`, import.meta.url);
    const w = ext === '.ts'
      ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true })
      : new Worker(url);
    w.unref();
    w.on('message', (r: PublishReply) => { replies.get(r.id)?.resolve(r); replies.delete(r.id); });
    const fail = (err: unknown) => {
      if (worker === w) worker = undefined;
      for (const p of replies.values()) p.reject(err);
      replies.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`record writer thread exited (${code})`)));
    return (worker = w);
  };
  // Write a chunk; per file, undefined when written, else its error. Test faults run here, before the thread.
  const writeChunk = async (files: [string, string | null][]): Promise<unknown[]> => {
    const errors: unknown[] = new Array(files.length).fill(undefined);
    const send: [string, string | null][] = [];
    const at: number[] = [];
    files.forEach(([abs, text], i) => {
      try {
        o.faults?.beforeWrite?.(abs);
        send.push([abs, text]);
        at.push(i);
      } catch (err) {
        errors[i] = err;
      }
    });
    if (!send.length) return errors;
    const id = ++nextId;
    const w = thread();
    const reply = await new Promise<PublishReply>((resolve, reject) => {
      replies.set(id, { resolve, reject });
      w.postMessage({ id, files: send } satisfies PublishRequest);
    });
    reply.results.forEach((r, k) => {
      if (r) errors[at[k]!] = storageError(Object.assign(new Error(r.message), { code: r.code }), send[k]![0]);
    });
    return errors;
  };

  // Flushers whose every entry is published resolve; with a failed round, those still waiting reject.
  const settleFlushers = (failed?: unknown) => {
    let oldest = Infinity;
    for (const e of pending.values()) if (e.seq < oldest) oldest = e.seq;
    const still: Waiter[] = [];
    for (const w of flushers) {
      if (w.seq < oldest) w.resolve();
      else if (failed !== undefined) w.reject(failed);
      else still.push(w);
    }
    flushers = still;
    if (pending.size < highWater) {
      const ready = roomWaiters;
      roomWaiters = [];
      for (const r of ready) r();
    }
  };

  // Entries old enough to write, oldest first (the map is in order of the last put); all of them when
  // something waits for them (flush, close, a full backlog).
  const due = (): [string, Entry][] => {
    if (flushers.length || closing || pending.size >= highWater) return [...pending];
    const cutoff = Date.now() - delayMs;
    const out: [string, Entry][] = [];
    for (const item of pending) {
      if (item[1].at > cutoff) break;
      out.push(item);
    }
    return out;
  };

  // One round takes every due entry; a round at a time, so one path never has two writes in flight.
  const run = async () => {
    while (pending.size) {
      if (retryMs) await new Promise((r) => setTimeout(r, retryMs));
      const batch = due();
      if (!batch.length) {
        const oldest = pending.values().next().value!;
        await new Promise((r) => setTimeout(r, Math.max(1, oldest.at + delayMs - Date.now())));
        continue;
      }
      let failed: unknown;
      for (let i = 0; i < batch.length; i += chunk) {
        const part = batch.slice(i, i + chunk);
        let errors: unknown[];
        try {
          errors = await writeChunk(part.map(([abs, e]) => [abs, e.text]));
        } catch (err) {
          errors = part.map(() => err);
        }
        part.forEach(([abs, e], k) => {
          if (errors[k] !== undefined) failed ??= errors[k];
          else if (pending.get(abs) === e) pending.delete(abs);
        });
        settleFlushers();
      }
      if (failed !== undefined) {
        retryMs = Math.min(Math.max(retryMs * 2, 50), 2000);
        o.log.error(`publishing record files failed; ${pending.size} wait in the journal, retry in ${retryMs} ms`, { err: (failed as Error).message });
      } else retryMs = 0;
      settleFlushers(failed);
      if (failed !== undefined && closing) break;
    }
    running = undefined;
    settleFlushers();
  };

  const kick = () => { running ??= run(); };

  return {
    put(abs, text) {
      pending.delete(abs); // re-inserted last: rounds go oldest first
      pending.set(abs, { text, seq: ++seq, at: Date.now() });
      kick();
    },
    peek: (abs) => pending.get(abs)?.text,
    flush() {
      if (!pending.size) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        flushers.push({ seq, resolve, reject });
        kick();
      });
    },
    room() {
      if (pending.size < highWater) return Promise.resolve();
      return new Promise<void>((r) => roomWaiters.push(r));
    },
    get backlog() {
      return pending.size;
    },
    // One last round (more if writes keep arriving); what a failing disk refuses stays in the journal for replay.
    async close() {
      closing = true;
      retryMs = 0;
      kick();
      await running;
      if (pending.size) o.log.warn(`${pending.size} record file(s) left to the journal replay at the next start`);
      await worker?.terminate();
      worker = undefined;
    },
  };
}
