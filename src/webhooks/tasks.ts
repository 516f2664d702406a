// The webhooks' only door into the task board: create, find by ticket, update or cancel a task still open.
// Every call into the tasks domain is in this file, so a change of its interface is an edit here alone.
import { byCreation, type Actor, type Task, type TaskCreate, type Tasks } from '../tasks/index.ts';

/** The board's shapes the webhook routes document (a task, a create body). */
export { Task as TaskSchema, TaskCreate as TaskCreateSchema } from '../tasks/index.ts';

/** Fields a ticket may change on its open task. */
export interface OpenTaskFields {
  title: string;
  description: string;
  role: string;
}

/** What the webhooks need from the board. */
export interface TaskPort {
  /** Create one task (refusals are the board's: 503 draining, 429 quota, 404 tenant…). */
  create(input: TaskCreate, who: Actor): Promise<Task>;
  /** The task whose `metadata.ticket` is this ticket (the live one when several are), if any. */
  byTicket(adapter: string, id: string): Task | undefined;
  /** Change title, description and role of a task that is still open; null when it no longer is. */
  updateOpen(id: string, fields: OpenTaskFields, who: Actor): Promise<Task | null>;
  /** Cancel a task that is still open; null when it no longer is. */
  cancelOpen(id: string, reason: string, who: Actor): Promise<Task | null>;
  /** The tenant a request names (unknown → 404), else the default one. */
  tenant(named?: string): string;
  /** Stop following the board. */
  close(): void;
}

const ticketKey = (adapter: string, id: string) => `${adapter}\u0000${id}`;
const TERMINAL = new Set(['done', 'failed', 'closed', 'refused', 'cancelled']);

/** The ticket a task was created for, from its `metadata.ticket = {adapter, id, url}`. */
export function ticketOf(t: Pick<Task, 'metadata'>): { adapter: string; id: string } | null {
  const m = t.metadata?.ticket as { adapter?: unknown; id?: unknown } | undefined;
  return m && typeof m.adapter === 'string' && typeof m.id === 'string' ? { adapter: m.adapter, id: m.id } : null;
}

// Thrown inside the compare-and-set when the task left `open` since it was read.
class NotOpen extends Error {}
const mustBeOpen = (t: Task) => { if (t.status !== 'open') throw new NotOpen(); };
const unlessNotOpen = (err: unknown): null => { if (err instanceof NotOpen) return null; throw err; };

/**
 * The port over the server's `Tasks`, with an index of tickets kept current from its changes. `scope`: the
 * tenant registry's rule for a named tenant (auth's TenantGate.scope).
 */
export function taskPort(svc: Tasks, scope: (bound: null, header: undefined, named: string | undefined) => string): TaskPort {
  const index = new Map<string, string>();
  // A ticket keeps pointing at its live task: a terminal task never displaces an active one.
  const see = (t: Task) => {
    const ticket = ticketOf(t);
    if (!ticket) return;
    const key = ticketKey(ticket.adapter, ticket.id);
    const cur = index.get(key);
    const held = cur && cur !== t.id ? svc.get(cur) : undefined;
    if (held && !TERMINAL.has(held.status) && TERMINAL.has(t.status)) return;
    index.set(key, t.id);
  };
  // Only tasks from tickets, oldest first (at 100k tasks a sort of the whole board cost the start ~0.1 s).
  const sorted: Task[] = [];
  for (const t of svc.each()) if (ticketOf(t) !== null) sorted.push(t);
  sorted.sort(byCreation);
  for (const t of sorted) see(t);
  const unsubscribe = svc.onChange(see);
  return {
    async create(input, who) {
      const task = await svc.create(input, who);
      see(task);
      return task;
    },
    byTicket(adapter, id) {
      const taskId = index.get(ticketKey(adapter, id));
      return taskId ? svc.get(taskId) : undefined;
    },
    updateOpen: (id, fields, who) => svc.patch(id, fields, who, { check: mustBeOpen }).catch(unlessNotOpen),
    cancelOpen: (id, reason, who) => svc.apply(id, 'cancel', { reason }, who, { check: mustBeOpen }).catch(unlessNotOpen),
    tenant: (named) => scope(null, undefined, named?.trim().toLowerCase() || undefined),
    close: () => { unsubscribe(); },
  };
}
