// Injected timers, so retries, write-behind delays and checkpoints run on a manual clock in tests.

/** The timer functions background work uses; handles are opaque. */
export interface Timers {
  /** Milliseconds since the epoch, on the same clock the timers run on. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/** The real timers: a timeout keeps the process alive (someone awaits it), an interval does not (periodic upkeep). */
export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
};

/** Resolve on the next turn of the event loop (after the IO waiting now): long work in slices lets requests in between. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolve after `ms` on `timers`; at once when `signal` aborts. */
export function sleep(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) { resolve(); return; }
    const done = () => { timers.clearTimeout(h); signal?.removeEventListener('abort', done); resolve(); };
    const h = timers.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Timers that fire only when `advance` moves their clock; for tests. */
export interface ManualTimers extends Timers {
  /** Move the clock by `ms`, firing due timers in time order; waits for the work they start between firings. */
  advance(ms: number): Promise<void>;
  /** Timers still waiting. */
  readonly pending: number;
}

/** Manual timers starting at `start` (epoch ms). */
export function manualTimers(start = Date.parse('2026-01-01T00:00:00.000Z')): ManualTimers {
  let t = start;
  let nextId = 0;
  const due = new Map<number, { at: number; fn: () => void; every?: number }>();
  const add = (fn: () => void, ms: number, every?: number) => {
    const id = ++nextId;
    due.set(id, { at: t + Math.max(0, ms), fn, every });
    return id;
  };
  return {
    now: () => t,
    setTimeout: (fn, ms) => add(fn, ms),
    clearTimeout: (h) => { due.delete(h as number); },
    setInterval: (fn, ms) => add(fn, ms, Math.max(1, ms)),
    clearInterval: (h) => { due.delete(h as number); },
    get pending() { return due.size; },
    async advance(ms) {
      const target = t + ms;
      for (;;) {
        await nextTurn(); // a real turn: promise chains and IO a timer started settle before the next one
        let first: [number, { at: number; fn: () => void; every?: number }] | undefined;
        for (const e of due) if (e[1].at <= target && (!first || e[1].at < first[1].at)) first = e;
        if (!first) break;
        const [id, timer] = first;
        t = Math.max(t, timer.at);
        if (timer.every) timer.at = t + timer.every;
        else due.delete(id);
        timer.fn();
      }
      t = target;
      await nextTurn();
    },
  };
}
