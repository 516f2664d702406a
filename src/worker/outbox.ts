// Reports that must reach the server (complete, fail, release, block): written to `.sdd/runtime/outbox/<sid>.json`
// before they are sent, replayed until the server answers. A fenced answer (409: the task is no longer
// this node's) is final and logged, like every other answer that a retry cannot change.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { writeFileAtomic } from '../store/atomic.ts';
import { join } from 'node:path';
import { isValidId } from '../store/ids.ts';
import type { Answer } from './client.ts';

/** One report of one session's end. */
export interface Report {
  session_id: string;
  task_id: string;
  /** block: the agent was killed on request (the task waits for a person, as for a local agent). */
  op: 'complete' | 'fail' | 'release' | 'block';
  body: Record<string, unknown>;
  /** Push refs/heads/agent/<sid> to the server first (a completion carries the work). */
  push: boolean;
  created_at: string;
  attempts: number;
  last_error: string | null;
}

/** What to do with a report after an answer (pure). */
export type Outcome = 'delivered' | 'retry' | 'reauth' | 'fenced' | 'gone' | 'rejected';

/** The server's answer → what becomes of the report: only no answer, 5xx and 429 are worth another try. */
export function outcomeOf(a: Pick<Answer, 'status'>): Outcome {
  const s = a.status;
  if (s >= 200 && s < 300) return 'delivered';
  if (s === 0 || s >= 500 || s === 429) return 'retry';
  if (s === 401) return 'reauth';
  if (s === 409) return 'fenced';
  if (s === 404) return 'gone';
  // 400, 403, 422 (the contract refused the completion: the server failed the task itself).
  return 'rejected';
}

/** The outbox folder of a workspace. */
export class Outbox {
  constructor(readonly dir: string) {}

  private path(sid: string): string {
    if (!isValidId(sid)) throw new Error(`invalid session id: ${JSON.stringify(sid).slice(0, 80)}`);
    return join(this.dir, `${sid}.json`);
  }

  /** Keep a report durably (temp file, fsync, rename, folder fsync), replacing an earlier one of the session. */
  async put(r: Report): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.path(r.session_id), JSON.stringify(r, null, 2) + '\n', { mode: 0o600 });
  }

  async drop(sid: string): Promise<void> {
    await rm(this.path(sid), { force: true });
  }

  /** Every report waiting, oldest first (unreadable files are skipped). */
  async list(): Promise<Report[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out: Report[] = [];
    for (const n of names) {
      if (!n.endsWith('.json') || !isValidId(n.slice(0, -5))) continue;
      try {
        out.push(JSON.parse(await readFile(join(this.dir, n), 'utf8')) as Report);
      } catch { /* a torn temp never gets this name; anything else is not ours */ }
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }
}
