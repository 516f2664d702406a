// The board's state: every card by id, its columns, and a redraw per animation frame however many changes arrive.
import { Column } from './column.js';

export const STATUSES = [
  ['open', 'Open'], ['claimed', 'Claimed'], ['in_progress', 'In progress'], ['waiting_for_subtasks', 'Waiting'],
  ['blocked', 'Blocked'], ['done', 'Done'], ['closed', 'Closed'], ['failed', 'Failed'], ['refused', 'Refused'], ['cancelled', 'Cancelled'],
];

const byQueue = (a, b) => a.priority - b.priority || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0);
const byRecent = (a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0);

export class Board {
  constructor(root) {
    this.cards = new Map();
    this.filter = '';
    this.columns = new Map(STATUSES.map(([s, label]) => [s, new Column(s, label)]));
    this.dirty = new Set();
    this.frame = 0;
    this.listeners = new Set();
    root.replaceChildren(...[...this.columns.values()].map((c) => c.el));
  }

  /** Replace every card (a fresh /dashboard/data). */
  load(tasks) {
    this.cards = new Map(tasks.map((t) => [t.id, t]));
    for (const s of this.columns.keys()) this.dirty.add(s);
    this.schedule();
  }

  /** Add or update one card from an event; older versions than the one shown are ignored. */
  upsert(t) {
    const prev = this.cards.get(t.id);
    if (prev && prev.version > t.version) return;
    this.cards.set(t.id, prev ? { ...prev, ...t } : t);
    this.dirty.add(t.status);
    if (prev && prev.status !== t.status) this.dirty.add(prev.status);
    this.schedule();
    for (const fn of this.listeners) fn(this.cards.get(t.id));
  }

  /** Hear every card change (the open detail panel follows its task). */
  onCard(fn) { this.listeners.add(fn); }

  setFilter(text) {
    this.filter = text.trim().toLowerCase();
    for (const s of this.columns.keys()) this.dirty.add(s);
    this.schedule();
  }

  /** Counts per status (all cards, not only the filtered ones). */
  counts() {
    const c = Object.fromEntries(STATUSES.map(([s]) => [s, 0]));
    for (const t of this.cards.values()) c[t.status] = (c[t.status] ?? 0) + 1;
    return c;
  }

  reveal(id) {
    const t = this.cards.get(id);
    return t ? this.columns.get(t.status)?.reveal(id) ?? false : false;
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  matches(t) {
    if (!this.filter) return true;
    return [t.title, t.role, t.id, t.assigned_agent, t.claimed_by_session].some((v) => v && String(v).toLowerCase().includes(this.filter));
  }

  flush() {
    this.frame = 0;
    const groups = new Map([...this.dirty].map((s) => [s, []]));
    for (const t of this.cards.values()) if (groups.has(t.status) && this.matches(t)) groups.get(t.status).push(t);
    for (const [s, items] of groups) this.columns.get(s)?.set(items.sort(s === 'open' ? byQueue : byRecent));
    this.dirty.clear();
    this.onFlush?.();
  }
}
