import { relative, sep } from 'node:path';
import type { Git } from '../store/git-cli.ts';

const STATE_REF = 'refs/sdd/state';

/** One state commit that changed a task's file. */
export interface HistoryEntry {
  commit: string;
  committed_at: string;
  message: string;
  /** Who made the change (the commit's Svc-Actor trailer), when the commit names one. */
  actors: string[];
  /** The task as that commit holds it (null: the commit removed the file). */
  status: string | null;
  version: number | null;
  updated_at: string | null;
  status_reason: string | null;
}

/** Parse `git log` lines (fields split by US, records by RS) (pure). */
export function parseLog(text: string): Omit<HistoryEntry, 'status' | 'version' | 'updated_at' | 'status_reason'>[] {
  return text.split('\x1e').map((r) => r.trim()).filter(Boolean).map((r) => {
    const [commit = '', committed_at = '', message = '', actors = ''] = r.split('\x1f');
    return { commit, committed_at, message, actors: actors.split(',').map((a) => a.trim()).filter(Boolean) };
  });
}

/** Parse `git cat-file --batch` output into the contents of each object, in order (null when missing) (pure). */
export function parseBatch(buf: Buffer): (string | null)[] {
  const out: (string | null)[] = [];
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) break;
    const header = buf.subarray(at, nl).toString('utf8');
    const m = /^[0-9a-f]+ \S+ (\d+)$/.exec(header);
    if (!m) { out.push(null); at = nl + 1; continue; }
    const size = Number(m[1]);
    out.push(buf.subarray(nl + 1, nl + 1 + size).toString('utf8'));
    at = nl + 1 + size + 1;
  }
  return out;
}

/** The newest `limit` state commits that changed the file at `abs`, each with the task as it was then. */
export async function fileHistory(git: Git, abs: string, limit: number): Promise<HistoryEntry[]> {
  const rel = relative(git.root, abs).split(sep).join('/');
  const log = await git.run(['log', `-n${limit}`, '--format=%H%x1f%cI%x1f%s%x1f%(trailers:key=Svc-Actor,valueonly,separator=%x2c)%x1e', STATE_REF, '--', rel], { allowFail: true });
  if (log.code !== 0) return [];
  const commits = parseLog(log.stdout);
  if (!commits.length) return [];
  const batch = await git.run(['cat-file', '--batch'], { input: commits.map((c) => `${c.commit}:${rel}\n`).join(''), allowFail: true });
  const bodies = parseBatch(Buffer.from(batch.stdout, 'utf8'));
  return commits.map((c, i) => {
    let rec: Record<string, unknown> | null = null;
    try { rec = bodies[i] ? (JSON.parse(bodies[i]!) as Record<string, unknown>) : null; } catch { rec = null; }
    return {
      ...c,
      status: typeof rec?.status === 'string' ? rec.status : null,
      version: typeof rec?.version === 'number' ? rec.version : null,
      updated_at: typeof rec?.updated_at === 'string' ? rec.updated_at : null,
      status_reason: typeof rec?.status_reason === 'string' ? rec.status_reason : null,
    };
  });
}
