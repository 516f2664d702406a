// IO at the edge: the board's own history for a window: tasks, their sessions, gate reports and merge commits.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditKeyError, formatAuditBreak, verifyAudit } from '../observe/index.ts';
import { createGit, relToSdd, type SddLayout } from '../store/index.ts';
import { stateHead } from './gather.ts';
import type { AuditVerdict, EvidenceRow } from './export.ts';

type TaskFile = { id: string; title: string; role: string; status: string; created_at: string; updated_at?: string; completed_at?: string | null; claimed_by_session?: string | null };
type GateFile = { session_id?: string; overall_pass?: boolean; failed_required?: string[] };

/** Rows for every task whose completion (else last update) falls in [since, until] (ms, inclusive), sorted by that time and id. */
export async function collectEvidence(layout: SddLayout, since: number, until: number): Promise<{ rows: EvidenceRow[]; audit: AuditVerdict; stateCommit: string | null }> {
  const [tasks, merges, audit, stateCommit] = await Promise.all([readTasks(layout), mergeCommits(layout.root), auditVerdict(layout), stateHead(layout.root)]);
  const rows: EvidenceRow[] = [];
  for (const t of tasks) {
    const at = t.completed_at ?? t.updated_at ?? t.created_at;
    const ms = Date.parse(at);
    if (!(ms >= since && ms <= until)) continue;
    const gate = await readJson<GateFile>(layout.gates(t.id));
    const merge = merges.get(t.id);
    const session = gate?.session_id ?? merge?.session ?? t.claimed_by_session ?? null;
    rows.push({
      task_id: t.id, title: t.title, role: t.role, status: t.status, created_at: t.created_at, completed_at: at,
      session_id: session, branch: session ? `agent/${session}` : null,
      gate_report: gate ? `.sdd/${relToSdd(layout, layout.gates(t.id))}` : null, gates_passed: gate ? gate.overall_pass === true : null,
      failed_gates: gate?.failed_required ?? [], merge_commit: merge?.commit ?? null, merged_at: merge?.at ?? null,
    });
  }
  rows.sort((a, b) => (a.completed_at === b.completed_at ? (a.task_id < b.task_id ? -1 : 1) : a.completed_at < b.completed_at ? -1 : 1));
  return { rows, audit, stateCommit };
}

async function readTasks(layout: SddLayout): Promise<TaskFile[]> {
  const out: TaskFile[] = [];
  for (const shard of (await readdir(layout.tasksDir).catch(() => [] as string[])).sort()) {
    const names = (await readdir(join(layout.tasksDir, shard)).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    for (const n of names) {
      const t = await readJson<TaskFile>(join(layout.tasksDir, shard, n));
      if (t?.id) out.push(t);
    }
  }
  return out;
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try { return JSON.parse(await readFile(path, 'utf8')) as T; } catch { return undefined; }
}

// svc's merge commits read `Merge agent/<sid>: <title> (task <id>)` (agents/finish.ts).
async function mergeCommits(root: string): Promise<Map<string, { commit: string; at: string; session: string }>> {
  const r = await createGit(root).run(['log', '--all', '--merges', '--format=%H%x1f%cI%x1f%s'], { allowFail: true }).catch(() => null);
  const out = new Map<string, { commit: string; at: string; session: string }>();
  for (const line of (r?.code === 0 ? r.stdout : '').split('\n')) {
    const [commit, at, subject] = line.split('\x1f');
    const task = /\(task ([0-9a-z][0-9a-z_-]{0,63})\)\s*$/.exec(subject ?? '')?.[1];
    const session = /^Merge agent\/([^:\s]+):/.exec(subject ?? '')?.[1];
    if (commit && at && task && session && !out.has(task)) out.set(task, { commit, at: new Date(at).toISOString(), session });
  }
  return out;
}

async function auditVerdict(layout: SddLayout): Promise<AuditVerdict> {
  try {
    const v = await verifyAudit(layout);
    if (v.records === 0 && v.ok) return { status: 'empty', records: 0, detail: 'no audit records' };
    return v.ok ? { status: 'verified', records: v.records, detail: `${v.records} records in ${v.segments} segment(s) verified` }
      : { status: 'broken', records: v.records, detail: v.firstBroken ? formatAuditBreak(v.firstBroken) : 'broken' };
  } catch (err) {
    if (!(err instanceof AuditKeyError)) throw err;
    return { status: 'unverifiable', records: 0, detail: 'the HMAC needs .sdd/secrets/audit.key' };
  }
}
