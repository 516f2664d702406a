import { existsSync } from 'node:fs';
import { oneLine } from '../lib/one-line.ts';
import { GitError, type Git } from '../store/git-cli.ts';
import { agentBranch, checkedOutAt, dirtyPaths, identityEnv, isAncestor, revParse } from '../runner/index.ts';

/** How a merge ended. `deferred` and `conflict` changed nothing; `deferred` may succeed later, `conflict` will not. */
export type MergeResult =
  | { status: 'merged'; commit: string; method: 'worktree' | 'plumbing' }
  | { status: 'already'; commit: string }
  | { status: 'deferred'; reason: string }
  | { status: 'conflict'; paths: string[] };

/** A three-way merge computed without touching any work tree. */
export type TreeMerge = { clean: true; tree: string } | { clean: false; paths: string[] };

// Lost compare-and-swap races before giving up (another writer keeps moving the base).
const MAX_ATTEMPTS = 5;

/** Merge `ours` and `theirs` into a tree with `git merge-tree --write-tree` (objects only, no refs, no files). */
export async function mergeTrees(git: Git, ours: string, theirs: string): Promise<TreeMerge> {
  const r = await git.run(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs], { allowFail: true });
  if (r.code > 1) throw new GitError(['merge-tree', ours, theirs], r);
  const [tree = '', ...rest] = r.stdout.split('\0');
  if (r.code === 0) return { clean: true, tree };
  const end = rest.indexOf('');
  return { clean: false, paths: [...new Set(end < 0 ? rest : rest.slice(0, end))] };
}

/** Merge session `sid`'s branch `agent/<sid>` into `base`; never touches a work tree with uncommitted changes. */
export function mergeSession(deps: { git: Git }, input: { sessionId: string; base: string; message?: string }): Promise<MergeResult> {
  return mergeBranch(deps, { branch: agentBranch(input.sessionId), base: input.base, message: input.message });
}

/** Merge `branch` into `base` (`--no-ff`): in the work tree where base is checked out, else with plumbing and a ref CAS. */
export function mergeBranch(deps: { git: Git }, input: { branch: string; base: string; message?: string | undefined }): Promise<MergeResult> {
  const message = oneLine(input.message ?? `Merge branch '${input.branch}' into ${input.base}`, 500);
  return deps.git.exclusive(async () => {
    for (let attempt = 1; ; attempt++) {
      const r = await mergeOnce(deps.git, input.branch, input.base, message);
      if (r !== 'retry') return r;
      if (attempt >= MAX_ATTEMPTS) return { status: 'deferred', reason: `branch '${input.base}' kept moving during the merge; try again` };
    }
  });
}

async function mergeOnce(git: Git, branch: string, base: string, message: string): Promise<MergeResult | 'retry'> {
  const baseTip = await revParse(git, `refs/heads/${base}`);
  if (!baseTip) return { status: 'deferred', reason: `base branch '${base}' does not exist` };
  const tip = await revParse(git, `refs/heads/${branch}`);
  if (!tip) throw new Error(`branch '${branch}' does not exist`);
  if (await isAncestor(git, tip, baseTip)) return { status: 'already', commit: baseTip };
  const merged = await mergeTrees(git, baseTip, tip);
  if (!merged.clean) return { status: 'conflict', paths: merged.paths };
  const at = await checkedOutAt(git, base);
  if (at) return mergeInWorktree(git, at, branch, base, message);
  const env = await identityEnv(git);
  const commit = (await git.run(['commit-tree', merged.tree, '-p', baseTip, '-p', tip, '-m', message], { env })).stdout.trim();
  const moved = await git.run(['update-ref', '-m', `svc: ${message}`, `refs/heads/${base}`, commit, baseTip], { allowFail: true });
  return moved.code === 0 ? { status: 'merged', commit, method: 'plumbing' } : 'retry';
}

// The base is checked out at `dir`: merge there only when its tracked files are clean, so the user's edits are never touched.
async function mergeInWorktree(git: Git, dir: string, branch: string, base: string, message: string): Promise<MergeResult> {
  const dirty = await dirtyPaths(git, dir);
  if (dirty.length > 0) {
    return { status: 'deferred', reason: `branch '${base}' is checked out at ${dir} with uncommitted changes to ${dirty.length} tracked file(s)` };
  }
  const r = await git.run(['merge', '--no-ff', '--no-edit', '-m', message, branch], { cwd: dir, env: await identityEnv(git), allowFail: true });
  if (r.code === 0) return { status: 'merged', commit: (await revParse(git, 'HEAD', dir))!, method: 'worktree' };
  // git refused (e.g. untracked files in the way) or stopped half-way: restore the work tree and retry later.
  const gitDir = (await git.run(['rev-parse', '--absolute-git-dir'], { cwd: dir })).stdout.trim();
  if (existsSync(`${gitDir}/MERGE_HEAD`)) await git.run(['merge', '--abort'], { cwd: dir, allowFail: true });
  return { status: 'deferred', reason: `git merge in ${dir} failed: ${(r.stderr || r.stdout).trim().split('\n')[0] ?? ''}` };
}
