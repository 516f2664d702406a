// The normalised ticket every tracker adapter produces, and what an event on it does to its task (pure).

/** A tracker's issue, the same shape for every adapter, from a webhook delivery or a poll. */
export interface Ticket {
  /** Canonical adapter name (tracker_a…tracker_e). */
  adapter: string;
  /** Stable id at the tracker (survives renames and moves); the upsert key with `adapter`. */
  id: string;
  /** What people call it (PROJ-7, owner/repo#7, ENG-12). */
  key: string;
  title: string;
  body: string;
  url: string;
  state: 'open' | 'closed';
  labels: string[];
  author: string;
  /** ISO-8601 time of the last change at the tracker; null when the payload has none. */
  updated_at: string | null;
}

/** What happened to a ticket. `polled` is a ticket listed by a startup poll. */
export type TicketAction = 'opened' | 'edited' | 'closed' | 'reopened' | 'labelled' | 'deleted' | 'polled';

export interface TicketEvent {
  action: TicketAction;
  ticket: Ticket;
}

/** The task fields a ticket decides. */
export interface TicketFields {
  title: string;
  description: string;
  role: string;
}

/** The part of the ticket's current task the plan reads. */
export interface TicketTask {
  id: string;
  status: string;
  title: string;
  description: string;
  role: string;
}

/** What to do with a ticket event. */
export type TicketPlan =
  | { kind: 'create'; fields: TicketFields }
  | { kind: 'update'; taskId: string; fields: TicketFields }
  | { kind: 'cancel'; taskId: string; reason: string }
  | { kind: 'note'; taskId: string | null; why: string }
  | { kind: 'unchanged'; taskId: string | null };

const ROLE = /^[a-z][a-z0-9_-]{0,63}$/;
const TITLE_MAX = 500;
const DESCRIPTION_MAX = 100_000;

/** The role a `role:<name>` label names (the last valid one), else backend. */
export function roleFromLabels(labels: readonly string[]): string {
  let role = 'backend';
  for (const l of labels) {
    const m = /^role:\s*(.+)$/i.exec(l.trim());
    const name = m?.[1]?.trim().toLowerCase();
    if (name && ROLE.test(name)) role = name;
  }
  return role;
}

/** Title, description and role of the task of a ticket (the description ends with where the ticket lives). */
export function ticketFields(t: Ticket): TicketFields {
  const title = (t.key ? `${t.key}: ${t.title}` : t.title).trim() || `${t.adapter} ticket ${t.id}`;
  const source = `Ticket ${t.key || t.id}${t.url ? ` (${t.url})` : ''}${t.author ? `, opened by ${t.author}` : ''}.`;
  const body = t.body.trim();
  const description = `${body ? `${body}\n\n` : ''}${source}`;
  return { title: cut(title, TITLE_MAX), description: cut(description, DESCRIPTION_MAX), role: roleFromLabels(t.labels) };
}

/**
 * The decision for one event, given the ticket's task if it has one: one task per ticket; an edit
 * updates an open task; a close or delete cancels an open task and is only noted otherwise; a closed
 * ticket without a task creates none; a reopened ticket whose task was cancelled gets a new task.
 */
export function planTicket(ev: TicketEvent, task: TicketTask | undefined): TicketPlan {
  const fields = ticketFields(ev.ticket);
  const closed = ev.ticket.state === 'closed' || ev.action === 'closed' || ev.action === 'deleted';
  if (!task) return closed ? { kind: 'unchanged', taskId: null } : { kind: 'create', fields };
  if (closed) {
    if (task.status === 'open') return { kind: 'cancel', taskId: task.id, reason: `ticket ${ev.ticket.key || ev.ticket.id} ${ev.action === 'deleted' ? 'deleted' : 'closed'} upstream` };
    if (task.status === 'cancelled') return { kind: 'unchanged', taskId: task.id };
    return { kind: 'note', taskId: task.id, why: `ticket closed upstream while its task is ${task.status}` };
  }
  if (ev.action === 'reopened' && task.status === 'cancelled') return { kind: 'create', fields };
  if (task.status !== 'open') {
    const differs = fields.title !== task.title || fields.description !== task.description || fields.role !== task.role;
    return differs ? { kind: 'note', taskId: task.id, why: `ticket changed while its task is ${task.status}` } : { kind: 'unchanged', taskId: task.id };
  }
  if (fields.title === task.title && fields.description === task.description && fields.role === task.role) return { kind: 'unchanged', taskId: task.id };
  return { kind: 'update', taskId: task.id, fields };
}

/** The first `max` characters (code points, never half a surrogate pair). */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}
