// `svc state log`: one row per change, newest first, from the commits of refs/sdd/state and their diffs.
// The verb and actor of a task change come from the audit record of that version (committed in the
// same history), else from the commit's only `Svc-Actor:` trailer.
import type { Git } from '../store/git-cli.ts';
import { shardedRel } from '../store/layout.ts';
import type { BlobReader } from '../store/index.ts';
import { describeChange, isoSeconds, parseTask, titleOf, type AuditFact, type HistoryRow } from './board-diff.ts';

interface Ctx {
  git: Git;
  blobs: BlobReader;
  ref: string;
}
interface Commit {
  oid: string;
  time: string;
  actors: string[];
  entries: { path: string; oldOid: string | null; newOid: string | null }[];
}

const PAGE = 100;
const TASK = /^\.sdd\/tasks\/[^/]+\/([^/]+)\.json$/;
const PROGRESS = /^\.sdd\/progress\/[^/]+\/([^/]+)\.jsonl$/;
const GATES = /^\.sdd\/gates\/[^/]+\/([^/]+)\.json$/;
const EDITED = new Set(['.sdd/config.yaml', '.sdd/tenants.json']);

/** Rows for the newest `limit` changes (of one task with `task`), since a date with `since`. */
export async function historyRows(ctx: Ctx, o: { task?: string; since?: string; limit: number }): Promise<HistoryRow[]> {
  const paths = o.task ? [`.sdd/${shardedRel('tasks', o.task, '.json')}`, `.sdd/${shardedRel('progress', o.task, '.jsonl')}`, `.sdd/${shardedRel('gates', o.task, '.json')}`] : ['.sdd'];
  const audit = auditIndex(ctx);
  const titles = new Map<string, string>();
  const rows: HistoryRow[] = [];
  for (let skip = 0; rows.length < o.limit; skip += PAGE) {
    const commits = await page(ctx, paths, skip, o.since);
    for (const c of commits) {
      rows.push(...(await commitRows(ctx, c, audit, titles)));
      if (rows.length >= o.limit) break;
    }
    if (commits.length < PAGE) break;
  }
  return rows.slice(0, o.limit);
}

// One page of commits with their changed paths (limited to `paths`).
async function page(ctx: Ctx, paths: string[], skip: number, since?: string): Promise<Commit[]> {
  const args = ['log', '-z', '--format=%H%x1f%ct%x1f%B', `-n${PAGE}`, `--skip=${skip}`, ...(since ? [`--since=${since}`] : []), ctx.ref, '--', ...paths];
  const log = (await ctx.git.run(args)).stdout.split('\0').filter(Boolean).map((rec) => {
    const [oid, ct, body] = rec.split('\x1f');
    const actors = [...(body ?? '').matchAll(/^Svc-Actor: (.+)$/gm)].map((m) => m[1]!.trim());
    return { oid: oid!.trim(), time: isoSeconds(Number(ct)), actors, entries: [] } as Commit;
  });
  if (!log.length) return log;
  const byOid = new Map(log.map((c) => [c.oid, c]));
  const raw = (await ctx.git.run(['diff-tree', '--stdin', '-r', '-z', '--no-renames', '--root', '--', ...paths], { input: log.map((c) => c.oid).join('\n') + '\n' })).stdout.split('\0');
  let cur: Commit | undefined;
  for (let i = 0; i < raw.length; i++) {
    const tok = raw[i]!;
    if (!tok.startsWith(':')) { cur = byOid.get(tok) ?? cur; continue; }
    const [, , oldOid, newOid] = tok.slice(1).split(' ');
    cur?.entries.push({ path: raw[++i]!, oldOid: /^0+$/.test(oldOid!) ? null : oldOid!, newOid: /^0+$/.test(newOid!) ? null : newOid! });
  }
  return log;
}

// The rows of one commit, newest first (audit time, then task id).
async function commitRows(ctx: Ctx, c: Commit, audit: ReturnType<typeof auditIndex>, titles: Map<string, string>): Promise<HistoryRow[]> {
  const actor = c.actors.length === 1 ? c.actors[0]! : null;
  const base = { rev: c.oid, time: c.time, actor };
  const rows: HistoryRow[] = [];
  for (const e of c.entries) {
    const task = TASK.exec(e.path)?.[1], progress = PROGRESS.exec(e.path)?.[1], gates = GATES.exec(e.path)?.[1];
    if (task) {
      const [before, after] = await Promise.all([e.oldOid ? ctx.blobs.read(e.oldOid).then(parseTask) : null, e.newOid ? ctx.blobs.read(e.newOid).then(parseTask) : null]);
      const version = typeof after?.version === 'number' ? after.version : undefined;
      const fact = version !== undefined ? await audit.find(task, version, c.time) : undefined;
      const title = titleOf(after ?? before);
      titles.set(task, title);
      rows.push({ ...base, ...(fact ? { time: fact.ts, actor: fact.actor } : {}), ...describeChange(before, after, fact), task_id: task, title });
    } else if (progress) {
      const added = await addedLines(ctx, e.oldOid, e.newOid);
      const entries = added.filter((l) => l.kind === 'entry');
      if (!entries.length) continue;
      const detail = entries.length === 1 ? (typeof entries[0]!.message === 'string' ? entries[0]!.message : null) : `×${entries.length}`;
      rows.push({ ...base, change: 'progress', task_id: progress, title: await titleAt(ctx, c.oid, progress, titles), detail });
    } else if (gates && e.newOid) {
      const report = parseObject(await ctx.blobs.read(e.newOid));
      rows.push({ ...base, change: 'gates', task_id: gates, title: await titleAt(ctx, c.oid, gates, titles), detail: report?.overall_pass === true ? 'passed' : 'failed' });
    } else if (EDITED.has(e.path)) {
      rows.push({ ...base, change: e.newOid ? 'edit' : 'delete', task_id: null, title: null, detail: e.path.slice(5) });
    }
  }
  return rows.sort((a, b) => (a.time === b.time ? String(a.task_id).localeCompare(String(b.task_id)) : a.time < b.time ? 1 : -1));
}

async function titleAt(ctx: Ctx, oid: string, id: string, titles: Map<string, string>): Promise<string> {
  if (!titles.has(id)) titles.set(id, titleOf(parseTask(await ctx.blobs.read(`${oid}:.sdd/${shardedRel('tasks', id, '.json')}`))));
  return titles.get(id)!;
}

// JSON lines appended between two versions of a JSONL file.
async function addedLines(ctx: Ctx, oldOid: string | null, newOid: string | null): Promise<Record<string, unknown>[]> {
  if (!newOid) return [];
  const [a, b] = await Promise.all([oldOid ? ctx.blobs.read(oldOid) : null, ctx.blobs.read(newOid)]);
  const tail = (b ?? Buffer.alloc(0)).subarray(a && b?.subarray(0, a.length).equals(a) ? a.length : 0).toString('utf8');
  return tail.split('\n').map((l) => parseObject(Buffer.from(l))).filter((x): x is Record<string, unknown> => x !== null);
}

function parseObject(data: Buffer | null): Record<string, unknown> | null {
  try {
    const v: unknown = data ? JSON.parse(data.toString('utf8')) : null;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Audit records of task changes, by task and version, read from the tip's daily segments: a change
 * committed at time T is in the segment of T's day or a neighbour, so only those few are read.
 */
function auditIndex(ctx: Ctx) {
  const days = new Map<string, Promise<Map<string, AuditFact>>>();
  const load = (day: string) => {
    if (!days.has(day)) {
      days.set(day, ctx.blobs.read(`${ctx.ref}:.sdd/audit/${day}.jsonl`).then((data) => {
        const out = new Map<string, AuditFact>();
        for (const line of (data ?? Buffer.alloc(0)).toString('utf8').split('\n')) {
          const r = parseObject(Buffer.from(line));
          const v = (r?.details as Record<string, unknown> | undefined)?.version;
          if (r?.resource_type === 'task' && typeof r.resource_id === 'string' && typeof v === 'number') {
            out.set(`${r.resource_id}@${v}`, { actor: String(r.actor), action: String(r.action), ts: String(r.ts) });
          }
        }
        return out;
      }));
    }
    return days.get(day)!;
  };
  return {
    async find(id: string, version: number, time: string): Promise<AuditFact | undefined> {
      const t = Date.parse(time);
      for (const d of [0, -1, 1]) {
        const hit = (await load(new Date(t + d * 86_400_000).toISOString().slice(0, 10))).get(`${id}@${version}`);
        if (hit) return hit;
      }
      return undefined;
    },
  };
}
