import { join } from 'node:path';
import { ID_PATTERN } from './ids.ts';

/** The ref that holds the history of `.sdd`. */
export const STATE_REF = 'refs/sdd/state';

/** Folders under `.sdd` that are never committed to refs/sdd/state. */
export const UNCOMMITTED_DIRS = ['runtime', 'secrets', 'worktrees', 'site'] as const;

/** Every path of the `.sdd` tree, in one place. `root` is the repository work tree. */
export function sddLayout(root: string) {
  const sdd = join(root, '.sdd');
  const runtime = join(sdd, 'runtime');
  return {
    root,
    sdd,
    config: join(sdd, 'config.yaml'),
    tasksDir: join(sdd, 'tasks'),
    progressDir: join(sdd, 'progress'),
    gatesDir: join(sdd, 'gates'),
    archive: join(sdd, 'archive', 'tasks.jsonl'),
    tenants: join(sdd, 'tenants.json'),
    auditDir: join(sdd, 'audit'),
    metricsRuns: join(sdd, 'metrics', 'runs.jsonl'),
    clusterDir: join(sdd, 'cluster'),
    euAiActDir: join(sdd, 'eu_ai_act'),
    complianceDir: join(sdd, 'compliance'),
    runtime,
    serverLock: join(runtime, 'server.lock'),
    serverInfo: join(runtime, 'server.json'),
    /** The last clean stop of the server's committer: the state ref's head then (store/recover.ts). */
    stateClean: join(runtime, 'state-clean.json'),
    /** The board's tasks as a clean stop left them, for the next start (store/snapshot.ts); removed once loaded. */
    boardSnapshot: join(runtime, 'board.snapshot'),
    agentsDir: join(runtime, 'agents'),
    logsDir: join(runtime, 'logs'),
    signalsDir: join(runtime, 'signals'),
    mergesDir: join(runtime, 'merges'),
    trackerLedger: join(runtime, 'tracker_webhook_ledger.jsonl'),
    chatLedger: join(runtime, 'chat_webhook_ledger.jsonl'),
    pollWatermarks: join(runtime, 'poll_watermarks.jsonl'),
    secrets: join(sdd, 'secrets'),
    tokens: join(sdd, 'secrets', 'tokens.json'),
    adminToken: join(sdd, 'secrets', 'admin.token'),
    auditKey: join(sdd, 'secrets', 'audit.key'),
    sessionKey: join(sdd, 'secrets', 'session.key'),
    ssoUsers: join(sdd, 'secrets', 'sso-users.json'),
    ssoSessions: join(sdd, 'secrets', 'sso-sessions.json'),
    groupMappings: join(sdd, 'auth', 'group-mappings.json'),
    worktrees: join(sdd, 'worktrees'),
    /** `svc site` data (subscribers, summary cache) unless --data-dir says otherwise; never committed. */
    site: join(sdd, 'site'),
    // `sdd` is normal and a sharded path has no `.` or `..` (checked ids): a template, not join (which normalises).
    task: (id: string) => `${sdd}/${shardedRel('tasks', id, '.json')}`,
    progress: (id: string) => `${sdd}/${shardedRel('progress', id, '.jsonl')}`,
    gates: (id: string) => `${sdd}/${shardedRel('gates', id, '.json')}`,
    agent: (sid: string) => join(runtime, 'agents', `${checked(sid)}.json`),
    log: (sid: string) => join(runtime, 'logs', `${checked(sid)}.log`),
    kill: (sid: string) => join(runtime, 'signals', `${checked(sid)}.kill`),
    worktree: (sid: string) => join(sdd, 'worktrees', checked(sid)),
    euAiAct: (id: string) => join(sdd, 'eu_ai_act', `${checked(id)}.json`),
  };
}
export type SddLayout = ReturnType<typeof sddLayout>;

/** `<dir>/<xx>/<id><ext>` relative to `.sdd`, fanned out by the id's last two characters. */
export function shardedRel(dir: string, id: string, ext: string): string {
  const safe = checked(id);
  return `${dir}/${safe.slice(-2).padStart(2, '0')}/${safe}${ext}`;
}

/** Path of a file relative to `.sdd`, with forward slashes (how the committer names it). */
export function relToSdd(layout: SddLayout, abs: string): string {
  const rel = abs.slice(layout.sdd.length + 1);
  return rel.includes('\\') ? rel.replaceAll('\\', '/') : rel;
}

/** True for a task file's path (relative to `.sdd`). */
export const isTaskFile = (rel: string): boolean => rel.startsWith('tasks/') && rel.endsWith('.json');

/** True for paths (relative to `.sdd`) that belong in refs/sdd/state. */
export function isCommitted(rel: string): boolean {
  const cut = rel.indexOf('/');
  const top = cut < 0 ? rel : rel.slice(0, cut);
  return !(UNCOMMITTED_DIRS as readonly string[]).includes(top) && !rel.endsWith('.tmp') && !rel.includes('.lock');
}

// Ids reach the disk only after this check: a bad id is a programming error here, callers 404 first.
function checked(id: string): string {
  if (!ID_PATTERN.test(id)) throw new Error(`invalid id for a path: ${JSON.stringify(id).slice(0, 80)}`);
  return id;
}
