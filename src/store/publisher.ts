// Write-behind of journaled changes: record texts (overwritten in place on a thread, coalesced per path)
// and appended lines (journal order per file, on the event loop). No fsync: the journal keeps them until
// a checkpoint's syncfs. Disk trouble is retried, never dropped.
import type { Logger } from '../lib/log.ts';
import { backoff } from '../lib/retry.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { Waker } from '../lib/waker.ts';
import { storageError, type Faults } from './disk.ts';
import { createLineFiles } from './line-files.ts';
import { createPublishThread } from './publish-thread.ts';
import { RecordText, textOf, type Content } from './records/cas.ts';
import type { Note } from './types.ts';

export interface Publisher {
  /** `abs` must become `content`'s text (null: deleted); its journal line is on disk already. */
  put(abs: string, content: Content | null): void;
  /** `line` (no newline) must be appended to `abs`, after the lines put before it. */
  append(abs: string, line: string, note?: Note): void;
  /** The content waiting for `abs` (null: a delete), or undefined when its file is up to date; textOf renders it. */
  peek(abs: string): Content | null | undefined;
  /** Lines of `abs` still waiting, oldest first. Read with the file in the same turn: a line is in one or the other. */
  lines(abs: string): readonly string[];
  /** The `*.json` texts of a folder by name, waiting texts included, read on the thread (dead writers' temps removed). */
  readFolder(dir: string): Promise<[string, string][]>;
  /** Resolves once everything put or appended before the call is on its file; rejects if a round failed on it. */
  flush(): Promise<void>;
  /** Resolves once the backlog is under the high-water mark (writers wait here: memory stays bounded). */
  room(): Promise<void>;
  /** Files and lines waiting. */
  readonly backlog: number;
  /** Publish everything (one try when the disk fails: the journal keeps the rest for replay). */
  close(): Promise<void>;
}

export interface PublisherOptions {
  log: Logger;
  faults?: Faults;
  timers?: Timers;
  /** Called after lines reached `abs` (mark it for the state commit), once per line with its note. */
  appended?(abs: string, note: Note | undefined): void;
  /** Backlog at which `room()` starts to wait (default 5,000; a bulk create runs at it: 20,000 kept ~15 MiB more, bench/README.md). */
  highWater?: number;
  /** A text waits this long (default 50 ms), so a record written again soon after costs one file write. */
  delayMs?: number;
}

type Text = { text: Content | null; seq: number; at: number };
type Line = { line: string; note?: Note; seq: number };
type Waiter = { seq: number; resolve(): void; reject(err: unknown): void };

/** The write-behind of a server's store (records/owned.ts): what the journal acknowledged, onto its files. */
export function createPublisher(o: PublisherOptions): Publisher {
  const timers = o.timers ?? systemTimers;
  const chunk = 256; // files per message to the thread
  const { highWater = 5_000, delayMs = 50 } = o;
  const texts = new Map<string, Text>();
  const queued = new Map<string, Line[]>();
  const thread = createPublishThread();
  const files = createLineFiles();
  const retry = backoff(50, 2000);
  let lineCount = 0, seq = 0, running: Promise<void> | undefined, closing = false;
  let flushers: Waiter[] = [], roomWaiters: (() => void)[] = [];
  const backlog = () => texts.size + lineCount;

  // Flushers whose every entry is published resolve; with a failed round, those still waiting reject.
  const settle = (failed?: unknown) => {
    let oldest = Infinity;
    for (const e of texts.values()) oldest = Math.min(oldest, e.seq);
    for (const q of queued.values()) oldest = Math.min(oldest, q[0]?.seq ?? Infinity);
    const still: Waiter[] = [];
    for (const w of flushers) {
      if (w.seq < oldest) w.resolve();
      else if (failed !== undefined) w.reject(failed);
      else still.push(w);
    }
    flushers = still;
    if (backlog() < highWater) for (const r of roomWaiters.splice(0)) r();
  };

  // Every file's queued lines in one synchronous write each; a refused file keeps its lines.
  const writeLines = async (): Promise<unknown> => {
    let failed: unknown;
    for (const [abs, q] of [...queued]) {
      try {
        await files.ready(abs);
        o.faults?.beforeWrite?.(abs);
        files.write(abs, q.map((l) => l.line).join('\n') + '\n');
      } catch (err) {
        failed ??= storageError(err, abs);
        continue;
      }
      // Still synchronous with the write: a reader sees each line in the file or in the queue.
      queued.delete(abs);
      lineCount -= q.length;
      for (const l of q) o.appended?.(abs, l.note);
    }
    return failed;
  };

  // Texts to write, oldest first: all of them when something waits (flush, close, a full backlog), else the
  // round starts when the oldest is due and takes every text half as old too, so rounds (a message to the
  // thread and its answer each) come every ~delayMs/2 with many texts, not every millisecond with a few.
  const urgent = () => flushers.length > 0 || closing || backlog() >= highWater;
  const due = (): [string, Text][] => {
    if (urgent()) return [...texts];
    const cutoff = timers.now() - delayMs / 2;
    const out: [string, Text][] = [];
    for (const item of texts) {
      if (item[1].at > cutoff) break;
      out.push(item);
    }
    return out;
  };

  const writeTexts = async (batch: [string, Text][]): Promise<unknown> => {
    let failed: unknown;
    for (let i = 0; i < batch.length; i += chunk) {
      const send: [string, Text][] = [];
      for (const [abs, e] of batch.slice(i, i + chunk)) {
        try { o.faults?.beforeWrite?.(abs); send.push([abs, e]); } catch (err) { failed ??= storageError(err, abs); }
      }
      if (!send.length) continue;
      // A record goes as its compact JSON: the thread renders the file text, not the event loop.
      const results = await thread.write(send.map(([abs, e]) => [abs, e.text instanceof RecordText ? { json: e.text.json } : e.text])).catch((err: unknown) => send.map(() => ({ message: (err as Error).message, code: undefined })));
      results.forEach((r, k) => {
        const [abs, e] = send[k]!;
        if (r) failed ??= storageError(Object.assign(new Error(r.message), { code: r.code }), abs);
        else if (texts.get(abs) === e) texts.delete(abs); // a newer text put meanwhile stays
      });
      settle();
    }
    return failed;
  };

  // One round at a time, so one file never has two writes in flight.
  const run = async () => {
    while (backlog()) {
      if (retry.current) await nap(retry.current);
      const oldest = texts.values().next().value;
      const textsDue = oldest !== undefined && (urgent() || oldest.at <= timers.now() - delayMs);
      if (!lineCount && !textsDue) {
        await nap(Math.max(1, oldest!.at + delayMs - timers.now()));
        continue;
      }
      const lineTrouble = await writeLines();
      const failed = (textsDue ? await writeTexts(due()) : undefined) ?? lineTrouble;
      if (failed !== undefined) {
        retry.next();
        o.log.error(`writing files behind the journal failed; ${backlog()} wait in the journal, retry in ${retry.current} ms`, { err: (failed as Error).message });
      } else retry.reset();
      settle(failed);
      if (failed !== undefined && closing) break;
    }
    running = undefined;
    settle();
  };
  const kick = () => { running ??= run(); };
  // A wait for texts to come due ends early when lines arrive: lines go out at once, so a reader of the
  // file (an audit check, the compliance CLI) sees every acknowledged line within a turn of the event loop.
  const waker = new Waker(timers), nap = (ms: number) => waker.sleep(ms), wake = () => waker.now();
  return {
    put(abs, content) {
      texts.delete(abs); // re-inserted last: rounds go oldest first
      texts.set(abs, { text: content, seq: ++seq, at: timers.now() });
      kick();
    },
    append(abs, line, note) {
      const q = queued.get(abs) ?? [];
      if (!q.length) queued.set(abs, q);
      q.push({ line, note, seq: ++seq });
      lineCount++;
      if (!retry.current) wake();
      kick();
    },
    peek: (abs) => texts.get(abs)?.text,
    lines: (abs) => queued.get(abs)?.map((l) => l.line) ?? [],
    readFolder: (dir) => thread.readFolder(dir, [...texts].map(([abs, e]) => [abs, e.text === null ? null : textOf(e.text)])),
    flush() {
      if (!backlog()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        flushers.push({ seq, resolve, reject });
        if (!retry.current) wake();
        kick();
      });
    },
    room: () => (backlog() < highWater ? Promise.resolve() : new Promise<void>((r) => roomWaiters.push(r))),
    get backlog() { return backlog(); },
    // One last round (more if writes keep arriving); what a failing disk refuses stays in the journal for replay.
    async close() {
      closing = true;
      retry.reset();
      wake();
      kick();
      await running;
      if (backlog()) o.log.warn(`${backlog()} file(s) and line(s) left to the journal replay at the next start`);
      await thread.terminate();
      await files.close();
    },
  };
}
