// A promise chain per key: callers with the same key run one at a time, in arrival order.
export class KeyedMutex {
  private tails = new Map<string, Promise<unknown>>();

  /**
   * Run `fn` once every earlier holder of `key` has finished; with none, at once. Each holder waits for the
   * one before it only (its promise resolves, never rejects, as that one ends): a chain in arrival order.
   */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    this.tails.set(key, mine);
    try {
      if (prev) await prev;
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === mine) this.tails.delete(key);
    }
  }

  /** Number of keys with a holder or waiters. */
  get size(): number {
    return this.tails.size;
  }
}
