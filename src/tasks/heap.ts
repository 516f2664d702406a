// The ready queue of one (tenant, role): a binary min-heap in dispatch order, with lazy deletion by the board.
// One ready-queue entry; it is live only while readyInfo maps its id to this very object.
export interface Entry { id: string; priority: number; created_at: string; queue: string }

// Dispatch order: lower priority number, then older created_at, then smaller id.
const before = (a: Entry, b: Entry): boolean =>
  a.priority !== b.priority ? a.priority < b.priority : a.created_at !== b.created_at ? a.created_at < b.created_at : a.id < b.id;

/** A binary min-heap of ready entries. */
export class Heap {
  items: Entry[] = [];
  get size(): number { return this.items.length; }
  push(e: Entry): void {
    const a = this.items;
    let i = a.push(e) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Entry | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) { a[0] = last; this.sink(0); }
    return top;
  }
  /** Keep only entries passing `keep`, then restore heap order in O(n). */
  rebuild(keep: (e: Entry) => boolean): void {
    this.items = this.items.filter(keep);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.sink(i);
  }
  private sink(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < a.length && before(a[l]!, a[m]!)) m = l;
      if (r < a.length && before(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
