import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { csvRow } from '../lib/csv.ts';
import type { RunRecord, SessionRecord, Task } from './types.ts';

export const EXPORT_FORMATS = ['json', 'jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** CSV columns of a task export (JSON and JSONL carry the whole task record plus cost_usd). */
export const TASK_COLUMNS = [
  'id', 'title', 'role', 'status', 'priority', 'tenant', 'assigned_agent', 'claimed_by_session', 'parent_task_id', 'depends_on', 'owned_files',
  'scope', 'complexity', 'estimated_minutes', 'model', 'retry_count', 'version', 'created_at', 'updated_at', 'claimed_at', 'completed_at',
  'failure_type', 'failure_reason', 'status_reason', 'result_summary', 'cost_usd', 'description',
] as const;

/** Columns of an agent export: one row per finished run, then one per live session. */
export const AGENT_COLUMNS = [
  'session_id', 'task_id', 'task_title', 'role', 'tenant', 'adapter', 'model', 'status', 'outcome', 'started_at', 'ended_at', 'seconds',
  'gates_passed', 'cost_usd', 'trace_id',
] as const;

export interface TaskFilter {
  status?: string[] | undefined;
  role?: string[] | undefined;
  assigned_agent?: string | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
  updated_after?: string | undefined;
  limit?: number | undefined;
}

export interface AgentFilter {
  adapter?: string | undefined;
  model?: string | undefined;
  outcome?: string[] | undefined;
  finished_after?: string | undefined;
  finished_before?: string | undefined;
  include_live?: boolean | undefined;
  limit?: number | undefined;
}

const inSet = (set: string[] | undefined, v: string) => !set || set.length === 0 || set.includes(v);
// ISO timestamps compare as text; bounds are compared as instants so `2026-01-01` works too.
const after = (ts: string | null | undefined, bound: string | undefined) => !bound || (!!ts && Date.parse(ts) >= Date.parse(bound));
const before = (ts: string | null | undefined, bound: string | undefined) => !bound || (!!ts && Date.parse(ts) < Date.parse(bound));

/** The tasks an export covers, in creation order (pure). */
export function selectTasks(tasks: readonly Task[], f: TaskFilter): Task[] {
  const out: Task[] = [];
  for (const t of tasks) {
    if (out.length >= (f.limit ?? Infinity)) break;
    if (!inSet(f.status, t.status) || !inSet(f.role, t.role)) continue;
    if (f.assigned_agent !== undefined && t.assigned_agent !== f.assigned_agent) continue;
    if (!after(t.created_at, f.created_after) || !before(t.created_at, f.created_before) || !after(t.updated_at, f.updated_after)) continue;
    out.push(t);
  }
  return out;
}

/** One task as an export row (pure). */
export function taskRow(t: Task, cost: number): Record<string, unknown> {
  return { ...t, failure_type: t.failure?.type ?? null, failure_reason: t.failure?.reason ?? null, cost_usd: cost };
}

/** Finished runs (oldest first) and then live sessions, as agent export rows (pure). */
export function agentRows(runs: readonly RunRecord[], live: readonly SessionRecord[], task: (id: string) => Task | undefined, f: AgentFilter): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  const keep = (adapter: string | null, model: string | null, outcome: string) =>
    (f.adapter === undefined || adapter === f.adapter) && (f.model === undefined || model === f.model) && inSet(f.outcome, outcome);
  for (const r of runs) {
    const t = task(r.task_id);
    if (!t || !keep(r.adapter, r.model, r.outcome) || !after(r.finished_at, f.finished_after) || !before(r.finished_at, f.finished_before)) continue;
    const started = new Date(Date.parse(r.finished_at) - r.seconds * 1000).toISOString();
    rows.push({ session_id: r.session_id, task_id: r.task_id, task_title: t.title, role: t.role, tenant: t.tenant, adapter: r.adapter, model: r.model, status: 'finished', outcome: r.outcome, started_at: started, ended_at: r.finished_at, seconds: r.seconds, gates_passed: r.gates_passed, cost_usd: r.cost_usd, trace_id: null });
  }
  if (f.include_live !== false && !f.finished_after && !f.finished_before) {
    for (const s of live) {
      if (!keep(s.adapter, s.model, 'running')) continue;
      rows.push({ session_id: s.session_id, task_id: s.task_id, task_title: s.task_title, role: s.role, tenant: s.tenant, adapter: s.adapter, model: s.model, status: s.status, outcome: 'running', started_at: s.started_at, ended_at: s.ended_at, seconds: null, gates_passed: s.gates_passed, cost_usd: null, trace_id: s.trace_id ?? null });
    }
  }
  return f.limit === undefined ? rows : rows.slice(0, f.limit);
}

const TYPES: Record<ExportFormat, string> = { json: 'application/json; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8; header=present' };

/**
 * Write rows as JSON (an array), JSONL or CSV with a header, in chunks that respect backpressure, so a
 * large board streams with bounded memory. Resolves with the number of rows written (fewer when the client left).
 */
export async function streamExport(res: ServerResponse, o: { format: ExportFormat; columns: readonly string[]; rows: Iterable<Record<string, unknown>>; filename: string }): Promise<number> {
  res.writeHead(200, { 'content-type': TYPES[o.format], 'content-disposition': `attachment; filename="${o.filename}.${o.format}"`, 'cache-control': 'no-store' });
  let buf = o.format === 'csv' ? csvRow(o.columns) : o.format === 'json' ? '[' : '';
  let n = 0;
  for (const row of o.rows) {
    if (o.format === 'csv') buf += csvRow(o.columns.map((c) => row[c]), true);
    else if (o.format === 'jsonl') buf += `${JSON.stringify(row)}\n`;
    else buf += `${n ? ',' : ''}\n${JSON.stringify(row)}`;
    n++;
    if (buf.length >= 65_536) {
      if (!(await write(res, buf))) return n;
      buf = '';
    }
  }
  if (o.format === 'json') buf += n ? '\n]\n' : ']\n';
  await write(res, buf);
  res.end();
  return n;
}

// false when the client went away.
async function write(res: ServerResponse, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (chunk && !res.write(chunk)) {
    await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  return !res.destroyed;
}
