// At most N holders per key at once; the others wait in arrival order.
export class KeyedSlots {
  private held = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();
  constructor(private readonly max: number) {}

  /** Wait for a free slot of `key`; resolves with the function that frees it (idempotent). */
  async acquire(key: string): Promise<() => void> {
    if ((this.held.get(key) ?? 0) >= this.max) {
      await new Promise<void>((resolve) => {
        const q = this.waiting.get(key) ?? [];
        q.push(resolve);
        this.waiting.set(key, q);
      });
    } else {
      this.held.set(key, (this.held.get(key) ?? 0) + 1);
    }
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.release(key);
    };
  }

  // A waiter takes the freed slot over (the count stays); with none, the count drops.
  private release(key: string): void {
    const q = this.waiting.get(key);
    const next = q?.shift();
    if (q && q.length === 0) this.waiting.delete(key);
    if (next) { next(); return; }
    const n = (this.held.get(key) ?? 1) - 1;
    if (n <= 0) this.held.delete(key);
    else this.held.set(key, n);
  }

  /** Slots held for `key`. */
  holders(key: string): number { return this.held.get(key) ?? 0; }
}
