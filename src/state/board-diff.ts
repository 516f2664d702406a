// Pure decisions over board snapshots from refs/sdd/state: what changed between two tasks or boards,
// and how one change reads in the history. No IO: tested with plain values.

/** A task file as stored (only `id` is relied on; the rest is shown as it is). */
export type TaskDoc = Record<string, unknown> & { id: string };

/** One field that differs: its value before and after (undefined = absent). */
export interface FieldChange {
  from: unknown;
  to: unknown;
}

export interface TaskChange {
  id: string;
  title: string;
  fields: Record<string, FieldChange>;
}

/** Tasks added, removed and changed between two boards, each sorted by id. */
export interface BoardDiff {
  added: TaskDoc[];
  removed: TaskDoc[];
  changed: TaskChange[];
}

/** The audit record of a change, as the history needs it. */
export interface AuditFact {
  actor: string;
  action: string;
  ts: string;
}

/** One line of `svc state log`. */
export interface HistoryRow {
  rev: string;
  time: string;
  actor: string | null;
  change: string;
  task_id: string | null;
  title: string | null;
  /** `open → claimed` when the status moved, else the fields that changed. */
  detail: string | null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Fields whose values differ (keys sorted), `from`/`to` undefined when absent on that side. */
export function fieldChanges(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, FieldChange> {
  const out: Record<string, FieldChange> = {};
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!same(a[k], b[k])) out[k] = { from: a[k], to: b[k] };
  }
  return out;
}

/** Compare two boards (id → task). */
export function diffBoards(a: ReadonlyMap<string, TaskDoc>, b: ReadonlyMap<string, TaskDoc>): BoardDiff {
  const ids = [...new Set([...a.keys(), ...b.keys()])].sort();
  const out: BoardDiff = { added: [], removed: [], changed: [] };
  for (const id of ids) {
    const x = a.get(id), y = b.get(id);
    if (!x) out.added.push(y!);
    else if (!y) out.removed.push(x);
    else {
      const fields = fieldChanges(x, y);
      if (Object.keys(fields).length) out.changed.push({ id, title: titleOf(y), fields });
    }
  }
  return out;
}

/** A task's title as text ('' when it has none). */
export function titleOf(t: Record<string, unknown> | null | undefined): string {
  return typeof t?.title === 'string' ? t.title : '';
}

// Bookkeeping fields every write moves; they say nothing about what the change was.
const NOISE = new Set(['version', 'updated_at']);

/**
 * How a change to one task file reads: the audited verb when the audit log has it (`claim`), else
 * `create`, `delete`, or `update`; detail is the status move or the fields that changed.
 */
export function describeChange(before: TaskDoc | null, after: TaskDoc | null, audit: AuditFact | undefined): { change: string; detail: string | null } {
  const verb = audit?.action.replace(/^task\./, '');
  if (!before) return { change: verb ?? 'create', detail: typeof after?.status === 'string' ? after.status : null };
  if (!after) return { change: verb ?? 'delete', detail: null };
  const fields = fieldChanges(before, after);
  const status = fields.status ? `${String(fields.status.from)} → ${String(fields.status.to)}` : null;
  const names = Object.keys(fields).filter((k) => !NOISE.has(k) && k !== 'status');
  return { change: verb ?? 'update', detail: status ?? (names.length ? names.join(', ') : null) };
}

/** A compact one-line value for tables: strings quoted, long values cut. */
export function showValue(v: unknown, max = 60): string {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A task file's text as a task, or null (absent, or not a task). */
export function parseTask(data: Buffer | null): TaskDoc | null {
  if (!data) return null;
  try {
    const v: unknown = JSON.parse(data.toString('utf8'));
    return typeof v === 'object' && v !== null && typeof (v as TaskDoc).id === 'string' ? (v as TaskDoc) : null;
  } catch {
    return null;
  }
}
/** Epoch seconds as ISO-8601 UTC without milliseconds: `2026-11-20T10:00:00Z`. */
export function isoSeconds(s: number): string {
  return new Date(s * 1000).toISOString().replace('.000Z', 'Z');
}
