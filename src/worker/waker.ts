// A sleep that a wake-up ends early (an agent exited, a report came, a signal asked to stop).
export class Waker {
  private wakeUp: (() => void) | null = null;
  private pending = false;

  /** Wait `ms`, or less if `now()` is called meanwhile (or was, since the last sleep). */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = null;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  /** End the current sleep, or the next one if none runs. */
  now(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pending = true;
  }
}
