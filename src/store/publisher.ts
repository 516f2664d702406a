import { unlink } from 'node:fs/promises';
import type { Logger } from '../lib/log.ts';
import { writeFileAtomic, type Faults } from './io.ts';

/**
 * Write-behind of journaled record texts onto their files (temp + rename, no fsync: the journal holds
 * them until a checkpoint has made the files durable). Writes to one path coalesce: a file written
 * twice before its turn is written once, with the newer text.
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
  /** Files written at once (default 4, the size of libuv's thread pool). */
  concurrency?: number;
  /** Backlog at which `room()` starts to wait (default 20,000 paths). */
  highWater?: number;
}

interface Entry { text: string | null; seq: number }
interface Waiter { seq: number; resolve(): void; reject(err: unknown): void }

export function createPublisher(o: PublisherOptions): Publisher {
  const concurrency = o.concurrency ?? 4;
  const highWater = o.highWater ?? 20_000;
  const pending = new Map<string, Entry>();
  let seq = 0;
  let running: Promise<void> | undefined;
  let flushers: Waiter[] = [];
  let roomWaiters: (() => void)[] = [];
  let retryMs = 0;
  let closing = false;

  const write = async (abs: string, text: string | null) => {
    if (text !== null) return writeFileAtomic(abs, text, o.faults, { durable: false });
    await unlink(abs).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
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

  // One round takes every entry present at its start; a round at a time, so one path never has two writes in flight.
  const run = async () => {
    while (pending.size) {
      if (retryMs) await new Promise((r) => setTimeout(r, retryMs));
      const batch = [...pending];
      let failed: unknown;
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < batch.length; i = next++) {
          const [abs, e] = batch[i]!;
          try {
            await write(abs, e.text);
            if (pending.get(abs) === e) pending.delete(abs);
          } catch (err) {
            failed ??= err;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, worker));
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
      pending.set(abs, { text, seq: ++seq });
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
    },
  };
}
