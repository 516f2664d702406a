// Whose a session's log is: kept beside the log, so the tenant check outlives the session record.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { forbidden, notFound } from '../lib/http-error.ts';
import type { Principal } from '../lib/route.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';

/** The task and tenant a session worked for. */
export interface SessionOwner {
  session_id: string;
  task_id: string;
  tenant: string;
}

/** `.sdd/runtime/logs/<sid>.owner.json` (written when the session starts, kept with its log). */
export function ownerPath(layout: Pick<SddLayout, 'logsDir'>, sid: string): string {
  if (!isValidId(sid)) throw new Error(`invalid session id for a path: ${JSON.stringify(sid).slice(0, 80)}`);
  return join(layout.logsDir, `${sid}.owner.json`);
}

/** Record who owns a session's log. */
export async function writeOwner(layout: Pick<SddLayout, 'logsDir'>, owner: SessionOwner): Promise<void> {
  await mkdir(layout.logsDir, { recursive: true, mode: 0o700 });
  await writeFile(ownerPath(layout, owner.session_id), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

/** The owner recorded for `sid`, or null (no such session, or a log from before owners were recorded). */
export async function readOwner(layout: Pick<SddLayout, 'logsDir'>, sid: string): Promise<SessionOwner | null> {
  try {
    const o = JSON.parse(await readFile(ownerPath(layout, sid), 'utf8')) as Partial<SessionOwner>;
    return typeof o.task_id === 'string' && typeof o.tenant === 'string' ? { session_id: sid, task_id: o.task_id, tenant: o.tenant } : null;
  } catch {
    return null;
  }
}

/**
 * Whether `principal`, acting in `tenant`, may see session `owner` (pure): another tenant's session, or
 * an unknown one, is 404 (it does not exist for them); a task-scoped token sees only its own task's.
 */
export function sessionAccess(owner: SessionOwner | null, sid: string, tenant: string, principal: Principal): void {
  if (!owner || owner.tenant !== tenant) throw notFound(`Session '${sid.slice(0, 100)}' not found`);
  if (principal.taskId && owner.task_id !== principal.taskId) {
    throw forbidden(`token is scoped to task '${principal.taskId}': session '${sid}' works on another task`);
  }
}
