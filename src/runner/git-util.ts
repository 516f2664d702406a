// Small git reads shared by worktrees, merge and partial merge. Every function only reads (safe inside `exclusive`).
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Git } from '../store/git-cli.ts';
import { refCommit } from '../store/git-objects.ts';

/** The branch of session `sid`. */
export function agentBranch(sid: string): string {
  return `agent/${sid}`;
}

/** The ref that keeps a retired session's unmerged work. */
export function graveyardRef(sid: string): string {
  return `refs/sdd/graveyard/${sid}`;
}

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** Full ref name (`refs/heads/…`), null when detached or bare. */
  branch: string | null;
  prunable: boolean;
}

/** Every worktree git knows of, the main one first. */
export async function listWorktrees(git: Git): Promise<WorktreeEntry[]> {
  const out = (await git.run(['worktree', 'list', '--porcelain', '-z'])).stdout;
  const entries: WorktreeEntry[] = [];
  let cur: WorktreeEntry | null = null;
  for (const field of out.split('\0')) {
    if (field.startsWith('worktree ')) entries.push((cur = { path: normalPath(field.slice(9)), head: null, branch: null, prunable: false }));
    else if (cur && field.startsWith('HEAD ')) cur.head = field.slice(5);
    else if (cur && field.startsWith('branch ')) cur.branch = field.slice(7);
    else if (cur && field.startsWith('prunable')) cur.prunable = true;
  }
  return entries;
}

/** The absolute, symlink-free form of a path (as is when it does not exist). */
export function normalPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** The work tree where `refs/heads/<branch>` is checked out, or null. */
export async function checkedOutAt(git: Git, branch: string): Promise<string | null> {
  const hit = (await listWorktrees(git)).find((w) => w.branch === `refs/heads/${branch}` && !w.prunable);
  return hit?.path ?? null;
}

/** The commit `ref` names, or null when it does not exist. */
export async function revParse(git: Git, ref: string, cwd?: string): Promise<string | null> {
  if (!cwd) return refCommit(git, ref);
  const r = await git.run(['rev-parse', '--verify', '-q', `${ref}^{commit}`], { allowFail: true, cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Number of commits reachable from `tip` but not from `base` (all of them when base is null). */
export async function commitsNotOn(git: Git, base: string | null, tip: string): Promise<number> {
  const range = base ? [`${base}..${tip}`] : [tip];
  return Number((await git.run(['rev-list', '--count', ...range])).stdout.trim());
}

/** True when `a` is an ancestor of (or equal to) `b`. */
export async function isAncestor(git: Git, a: string, b: string): Promise<boolean> {
  return (await git.run(['merge-base', '--is-ancestor', a, b], { allowFail: true })).code === 0;
}

/** Paths with changes to tracked files in a work tree (`untracked` adds untracked ones); [] when clean. */
export async function dirtyPaths(git: Git, cwd: string, opts: { untracked?: boolean; paths?: readonly string[] } = {}): Promise<string[]> {
  const args = ['status', '--porcelain', '-z', `--untracked-files=${opts.untracked ? 'all' : 'no'}`];
  if (opts.paths) args.push('--', ...opts.paths);
  const out = (await git.run(args, { cwd, env: LITERAL })).stdout;
  const paths: string[] = [];
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    paths.push(f.slice(3));
    // Renames and copies carry their source path in the next field.
    if (f[0] === 'R' || f[0] === 'C') i++;
  }
  return paths;
}

/** Pathspecs are plain file names, never globs or magic. */
export const LITERAL = { GIT_LITERAL_PATHSPECS: '1' } as const;

/** Author/committer variables for our own commits when the repository has no identity configured. */
export async function identityEnv(git: Git): Promise<Record<string, string>> {
  const ok = (await git.run(['var', 'GIT_COMMITTER_IDENT'], { allowFail: true })).code === 0;
  if (ok) return {};
  return { GIT_AUTHOR_NAME: 'svc', GIT_AUTHOR_EMAIL: 'svc@localhost', GIT_COMMITTER_NAME: 'svc', GIT_COMMITTER_EMAIL: 'svc@localhost' };
}
