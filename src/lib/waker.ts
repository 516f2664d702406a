// A sleep that a wake-up ends early (an agent exited, a report came, lines to write, a signal to stop).
import { systemTimers, type Timers } from './timers.ts';

export class Waker {
  private wakeUp: (() => void) | null = null;
  private pending = false;

  constructor(private readonly timers: Timers = systemTimers) {}

  /** Wait `ms`, or less if `now()` is called meanwhile (or was, since the last sleep). */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        this.timers.clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = this.timers.setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  /** End the current sleep, or the next one if none runs. */
  now(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pending = true;
  }
}
