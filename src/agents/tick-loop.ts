import { systemTimers, type Timers } from '../lib/timers.ts';

/** Runs one async job at a time: a run asked for while one is running waits for it, a timer run is dropped. */
export class TickLoop {
  private current: Promise<void> | null = null;
  private pending = false;
  private debounce: unknown = null;
  private interval: unknown = null;
  private active = false;
  private readonly timers: Timers;

  /** `timers`: the interval and the debounce run on them (tests pass manual ones). */
  constructor(private readonly job: () => Promise<void>, private readonly opts: { debounceMs: number; onError: (err: unknown) => void; timers?: Timers }) {
    this.timers = opts.timers ?? systemTimers;
  }

  /** Allow runs; with `everyMs`, also run on an interval (a slow run is never stacked). */
  start(everyMs?: number): void {
    this.active = true;
    if (everyMs !== undefined) this.interval = this.timers.setInterval(() => this.kick(false), everyMs);
  }

  /** Stop timers and wait for the run in progress. */
  async stop(): Promise<void> {
    this.active = false;
    if (this.debounce !== null) this.timers.clearTimeout(this.debounce);
    if (this.interval !== null) this.timers.clearInterval(this.interval);
    this.debounce = this.interval = null;
    while (this.current) await this.current;
  }

  /** Ask for a run soon; bursts within `debounceMs` make one run. */
  request(): void {
    if (!this.active || this.debounce !== null) return;
    this.debounce = this.timers.setTimeout(() => {
      this.debounce = null;
      this.kick(true);
    }, this.opts.debounceMs);
  }

  /** Run once now (after the run in progress), even when not started; resolves when that run ends. */
  async once(): Promise<void> {
    while (this.current) await this.current;
    await this.launch();
  }

  // `requested` runs queue one follow-up when busy; timer runs are dropped instead.
  kick(requested: boolean): void {
    if (!this.active) return;
    if (this.current) {
      if (requested) this.pending = true;
      return;
    }
    void this.launch();
  }

  private launch(): Promise<void> {
    const run = this.job()
      .catch(this.opts.onError)
      .finally(() => {
        this.current = null;
        if (this.pending && this.active) {
          this.pending = false;
          this.kick(true);
        }
      });
    this.current = run;
    return run;
  }
}
