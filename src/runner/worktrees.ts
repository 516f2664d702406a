import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Git } from '../store/git-cli.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import { agentBranch, checkedOutAt, commitsNotOn, dirtyPaths, graveyardRef, identityEnv, isAncestor, listWorktrees, normalPath, revParse } from './git-util.ts';

/** Git and the `.sdd` layout: all a worktree operation needs. */
export interface WorktreeDeps {
  git: Git;
  layout: SddLayout;
}

/** A session's worktree. */
export interface WorktreeInfo {
  sessionId: string;
  path: string;
  branch: string;
}

/** The branch checked out in the repository's main work tree (the default merge base), or null if detached. */
export async function currentBranch(git: Git): Promise<string | null> {
  const r = await git.run(['symbolic-ref', '--short', '-q', 'HEAD'], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Create `.sdd/worktrees/<sid>` on a new branch `agent/<sid>` from `base` (or on the existing branch, to resume); idempotent. */
export async function addWorktree(deps: WorktreeDeps, sid: string, base: string): Promise<WorktreeInfo> {
  const path = deps.layout.worktree(sid);
  const branch = agentBranch(sid);
  await deps.git.exclusive(async () => {
    const here = (await listWorktrees(deps.git)).find((w) => w.path === normalPath(path) && !w.prunable);
    if (here?.branch === `refs/heads/${branch}`) return;
    const exists = (await revParse(deps.git, `refs/heads/${branch}`)) !== null;
    await deps.git.run(exists ? ['worktree', 'add', path, branch] : ['worktree', 'add', '-b', branch, path, base]);
  });
  return { sessionId: sid, path, branch };
}

/** What retiring a session did; `graveyard` lists refs that now hold its unmerged or uncommitted work. */
export interface RetireResult {
  sessionId: string;
  graveyard: string[];
  removedWorktree: boolean;
  deletedBranch: boolean;
}

/** Remove a finished session's worktree and branch; unmerged commits and uncommitted changes go to the graveyard first. */
export function retireSession(deps: WorktreeDeps, sid: string, base: string): Promise<RetireResult> {
  return deps.git.exclusive(() => retireLocked(deps, sid, base));
}

async function retireLocked(deps: WorktreeDeps, sid: string, base: string): Promise<RetireResult> {
  const { git } = deps;
  const branchRef = `refs/heads/${agentBranch(sid)}`;
  const path = isValidId(sid) ? normalPath(deps.layout.worktree(sid)) : null;
  const wt = path ? (await listWorktrees(git)).find((w) => w.path === path && !w.prunable) : undefined;
  const tip = await revParse(git, branchRef);
  const keep: string[] = [];
  if (wt && existsSync(wt.path)) keep.push((await snapshotUncommitted(git, wt.path, sid)) ?? (await revParse(git, 'HEAD', wt.path)) ?? '');
  if (tip) keep.push(tip);
  const graveyard = await preserve(git, sid, keep.filter(Boolean), await revParse(git, `refs/heads/${base}`));
  if (wt) await git.run(['worktree', 'remove', '--force', wt.path]);
  await git.run(['worktree', 'prune']);
  // Compare-and-delete: the branch goes only if it still points where we preserved it from and nobody has it checked out.
  const inUse = tip ? await checkedOutAt(git, agentBranch(sid)) : null;
  const deleted = tip && !inUse ? (await git.run(['update-ref', '-d', branchRef, tip], { allowFail: true })).code === 0 : false;
  return { sessionId: sid, graveyard, removedWorktree: Boolean(wt), deletedBranch: deleted };
}

/** A commit of everything uncommitted in `dir` (tracked and untracked files) on top of its HEAD, or null if clean. Call inside `git.exclusive`. */
export async function snapshotUncommitted(git: Git, dir: string, sid: string): Promise<string | null> {
  if ((await dirtyPaths(git, dir, { untracked: true })).length === 0) return null;
  const head = await revParse(git, 'HEAD', dir);
  const tmp = await mkdtemp(join(tmpdir(), 'svc-index-'));
  // A private index: the worktree's own index and files stay exactly as the agent left them.
  const env = { GIT_INDEX_FILE: join(tmp, 'index') };
  try {
    if (head) await git.run(['read-tree', head], { cwd: dir, env });
    await git.run(['add', '-A', '--', '.'], { cwd: dir, env });
    const tree = (await git.run(['write-tree'], { cwd: dir, env })).stdout.trim();
    const msg = `svc: uncommitted work of session ${sid}, saved before its worktree was removed`;
    const args = ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', msg];
    return (await git.run(args, { cwd: dir, env: { ...env, ...(await identityEnv(git)) } })).stdout.trim();
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// Point graveyard refs at every commit not yet on base; a commit another one already contains needs no ref of its own.
async function preserve(git: Git, sid: string, commits: string[], base: string | null): Promise<string[]> {
  const unmerged: string[] = [];
  for (const c of new Set(commits)) if ((await commitsNotOn(git, base, c)) > 0) unmerged.push(c);
  const heads: string[] = [];
  for (const c of unmerged) {
    const covered = await someAsync(unmerged, (o) => o !== c && isAncestor(git, c, o));
    if (!covered) heads.push(c);
  }
  const refs: string[] = [];
  for (const c of heads) refs.push(await writeGraveyard(git, sid, c));
  return refs;
}

async function someAsync<T>(xs: readonly T[], pred: (x: T) => boolean | Promise<boolean>): Promise<boolean> {
  for (const x of xs) if (await pred(x)) return true;
  return false;
}

// Never overwrite a graveyard ref that holds something else: take the next free name `<sid>.2`, `<sid>.3`, …
async function writeGraveyard(git: Git, sid: string, commit: string): Promise<string> {
  for (let n = 1; ; n++) {
    const ref = n === 1 ? graveyardRef(sid) : `${graveyardRef(sid)}.${n}`;
    const old = await revParse(git, ref);
    if (old === commit) return ref;
    if (old && !(await isAncestor(git, old, commit))) continue;
    const r = await git.run(['update-ref', '-m', `svc: retire ${sid}`, ref, commit, old ?? ''], { allowFail: true });
    if (r.code === 0) return ref;
  }
}

/** What reconcile did at start. `unknown` are folders under .sdd/worktrees git does not know; they are left alone. */
export interface ReconcileReport {
  adopted: string[];
  recreated: string[];
  retired: RetireResult[];
  unknown: string[];
}

/** Sessions to adopt, re-add (branch without worktree) and retire (pure). */
export function planReconcile(input: { live: ReadonlySet<string>; worktreeSids: readonly string[]; branchSids: readonly string[] }) {
  const wt = new Set(input.worktreeSids);
  const all = [...new Set([...input.worktreeSids, ...input.branchSids])].sort();
  return {
    adopt: all.filter((s) => input.live.has(s) && wt.has(s)),
    recreate: all.filter((s) => input.live.has(s) && !wt.has(s) && isValidId(s)),
    retire: all.filter((s) => !input.live.has(s)),
  };
}

/** At start: prune missing worktrees, keep live sessions' worktrees, retire every other `agent/*` branch and worktree. */
export async function reconcileWorktrees(deps: WorktreeDeps, input: { live: ReadonlySet<string>; base: string; remote?: ReadonlySet<string> }): Promise<ReconcileReport> {
  const { git, layout } = deps;
  await git.mutate(['worktree', 'prune']);
  const root = normalPath(layout.worktrees);
  const ours = (await listWorktrees(git)).filter((w) => !w.prunable && w.path.startsWith(root + '/'));
  const worktreeSids = ours.map((w) => w.path.slice(root.length + 1)).filter((s) => !s.includes('/'));
  const refs = (await git.run(['for-each-ref', '--format=%(refname)', 'refs/heads/agent/'])).stdout.split('\n').filter(Boolean);
  // Branches that sessions of cluster nodes pushed (`remote`) are theirs until the orchestrator adopts them.
  const branchSids = refs.map((r) => r.slice('refs/heads/agent/'.length)).filter((sid) => !input.remote?.has(sid));
  const plan = planReconcile({ live: input.live, worktreeSids, branchSids });
  for (const sid of plan.recreate) await addWorktree(deps, sid, input.base);
  const retired: RetireResult[] = [];
  for (const sid of plan.retire) retired.push(await retireSession(deps, sid, input.base));
  const known = new Set([...worktreeSids, ...plan.recreate]);
  const dirs = existsSync(layout.worktrees) ? readdirSync(layout.worktrees) : [];
  return { adopted: plan.adopt, recreated: plan.recreate, retired, unknown: dirs.filter((d) => !known.has(d) && !plan.retire.includes(d)) };
}
