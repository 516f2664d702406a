// Durable JSON-line appends to many files, each through its own AppendLog, a bounded number open at once.
import type { Faults } from './disk.ts';
import { appendLog, type AppendLog } from './append-log.ts';

/** Durable JSON-line appends to many files: one AppendLog per file, the least recently used closed beyond `max`. */
export interface Appenders {
  /** Append `line` (no newline) to `abs`; resolves once it is on disk. */
  append(abs: string, line: string): Promise<void>;
  close(): Promise<void>;
}

/** Appenders with datasync; `max` files open at once (default 32). */
export function createAppenders(o: { faults?: Faults; max?: number } = {}): Appenders {
  const logs = new Map<string, AppendLog>();
  const closing = new Map<string, Promise<void>>();
  const max = o.max ?? 32;
  // The append is queued before an eviction can close the log: close() runs behind it.
  const appendTo = async (abs: string, line: string): Promise<void> => {
    // One writer per file: a log being closed finishes first (checked again after each wait).
    for (let c = closing.get(abs); c; c = closing.get(abs)) await c;
    let log = logs.get(abs);
    if (log) logs.delete(abs); // re-inserted last: most recently used
    else log = appendLog(abs, { faults: o.faults });
    logs.set(abs, log);
    const done = log.append(line + '\n');
    if (logs.size > max) {
      const [old, oldLog] = logs.entries().next().value!;
      logs.delete(old);
      const closed: Promise<void> = Promise.all([closing.get(old), oldLog.close().catch(() => undefined)])
        .then(() => { if (closing.get(old) === closed) closing.delete(old); });
      closing.set(old, closed);
    }
    return done;
  };
  return {
    append: appendTo,
    async close() {
      await Promise.all([...logs.values()].map((l) => l.close().catch(() => undefined)));
      logs.clear();
      await Promise.all(closing.values());
    },
  };
}
