// A promise chain per key: callers with the same key run one at a time, in arrival order.
export class KeyedMutex {
  private tails = new Map<string, Promise<unknown>>();

  /** Run `fn` once every earlier holder of `key` has finished. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    try {
      await prev.catch(() => undefined);
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Number of keys with a holder or waiters. */
  get size(): number {
    return this.tails.size;
  }
}
