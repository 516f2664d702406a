/** Event names of the board's change feed (`GET /events`, DECISIONS.md Observability and clients). */
export const BOARD_EVENTS = ['task_created', 'task_updated', 'agent_started', 'agent_exited'] as const;
export type BoardEvent = (typeof BOARD_EVENTS)[number];

/**
 * One change of the board: its sequence number, event name, tenant and JSON data, serialised once when
 * a client first needs it (sent to every client from then on; none listening, none serialised). The data
 * may be given as a function of values that never change (a task record): then it is built only then too.
 */
export class Change {
  private json: string | undefined;
  constructor(readonly seq: number, readonly event: BoardEvent, readonly tenant: string, private value: unknown) {}
  get data(): string {
    if (this.json === undefined) {
      this.json = JSON.stringify(typeof this.value === 'function' ? (this.value as () => unknown)() : this.value);
      this.value = undefined;
    }
    return this.json;
  }
}

/** What a client resuming after `seq` gets: the changes since, or a reset when they are no longer held. */
export type Since = { kind: 'changes'; changes: Change[] } | { kind: 'reset'; seq: number };

/**
 * A bounded ring of the most recent board changes (pure: no clock, no IO). Sequence numbers start
 * after `base` and grow by one per change; a server starts its ring at a base above any sequence an
 * earlier run gave out (the start time in ms × 1000), so a client's id from before a restart is
 * older than the ring and gets a reset, never a silent gap.
 */
export class ChangeRing {
  private readonly buf: (Change | undefined)[];
  private last: number;

  constructor(readonly size: number, readonly base = 0) {
    if (!Number.isInteger(size) || size < 1) throw new Error('ring size must be a positive integer');
    this.buf = new Array<Change | undefined>(size);
    this.last = base;
  }

  /** The sequence number of the newest change (the base when there is none yet). */
  get seq(): number { return this.last; }

  /** The oldest sequence number still held (seq + 1 when the ring is empty). */
  get oldest(): number { return Math.max(this.base + 1, this.last - this.size + 1); }

  /** Add a change; `data` (or what a function given as `data` reads) must not change afterwards: it is serialised on first use. */
  push(event: BoardEvent, tenant: string, data: unknown): Change {
    const c = new Change(++this.last, event, tenant, data);
    this.buf[c.seq % this.size] = c;
    return c;
  }

  /** Changes with a sequence number above `after`, oldest first; a reset when some of them were dropped or `after` is unknown. */
  since(after: number): Since {
    if (!Number.isSafeInteger(after) || after > this.last || (after < this.oldest - 1)) return { kind: 'reset', seq: this.last };
    const out: Change[] = [];
    for (let s = after + 1; s <= this.last; s++) out.push(this.buf[s % this.size]!);
    return { kind: 'changes', changes: out };
  }
}
