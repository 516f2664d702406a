import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import { oneLine } from '../lib/one-line.ts';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { agentBranch, checkedOutAt, dirtyPaths, identityEnv, LITERAL, revParse } from '../runner/index.ts';
import { readMergeState, writeMergeState, type PartialMergeResponse } from './merge-state.ts';

/** `ok`: the response body; `refused`: the user's checkout has changes to target files (409); `invalid`: bad input (422). */
export type PartialMergeOutcome =
  | ({ status: 'ok' } & PartialMergeResponse)
  | { status: 'refused'; detail: string; files: string[] }
  | { status: 'invalid'; detail: string };

/** A blob in a tree: mode and object id. */
export interface TreeEntry {
  mode: string;
  oid: string;
}

/** The requested files sorted into what to write, what is already there, and what cannot be merged (pure). */
export function classifyFiles(input: {
  files: readonly string[];
  alreadyMerged: ReadonlySet<string>;
  dirtyInWorktree: ReadonlySet<string>;
  branch: ReadonlyMap<string, TreeEntry>;
  base: ReadonlyMap<string, TreeEntry>;
  fork: ReadonlyMap<string, TreeEntry>;
}) {
  const same = (a?: TreeEntry, b?: TreeEntry) => a?.oid === b?.oid && a?.mode === b?.mode;
  const out = { skipped: [] as string[], uncommitted: [] as string[], conflicting: [] as string[], unchanged: [] as string[], write: [] as string[] };
  for (const f of input.files) {
    const b = input.branch.get(f);
    if (input.alreadyMerged.has(f)) out.skipped.push(f);
    else if (!b || input.dirtyInWorktree.has(f)) out.uncommitted.push(f);
    // Already identical on base, or the branch never changed it: nothing to write, and nothing of base's is reverted.
    else if (same(b, input.base.get(f)) || same(b, input.fork.get(f))) out.unchanged.push(f);
    // Base changed the file since the branch forked, and so did the branch: a human decides.
    else if (!same(input.base.get(f), input.fork.get(f))) out.conflicting.push(f);
    else out.write.push(f);
  }
  return out;
}

/** A repository-relative file name, or null when it could escape the tree or name a folder. */
export function normalizeRepoPath(p: string): string | null {
  const s = p.replace(/^(\.\/)+/, '');
  if (!s || s.startsWith('/') || s.endsWith('/') || s.includes('\0')) return null;
  return s.split('/').some((seg) => seg === '' || seg === '.' || seg === '..' || seg === '.git') ? null : s;
}

/** Merge the named committed files of `agent/<sid>` into `base` as one commit; see PartialMergeOutcome. */
export function partialMerge(
  deps: { git: Git; layout: SddLayout; clock: Clock },
  input: { sessionId: string; base: string; files: readonly string[]; message?: string },
): Promise<PartialMergeOutcome> {
  const files = [...new Set(input.files.map((f) => normalizeRepoPath(f) ?? ''))];
  if (input.files.length === 0) return Promise.resolve({ status: 'invalid', detail: 'No files specified' });
  if (files.includes('')) return Promise.resolve({ status: 'invalid', detail: 'files must be relative paths inside the repository' });
  return deps.git.exclusive(async () => {
    for (let attempt = 1; ; attempt++) {
      const r = await attemptPartialMerge(deps, { ...input, files });
      if (r !== 'retry') return r;
      if (attempt >= 5) return { status: 'refused', detail: `branch '${input.base}' kept moving during the merge; try again`, files: [] };
    }
  });
}

async function attemptPartialMerge(
  deps: { git: Git; layout: SddLayout; clock: Clock },
  input: { sessionId: string; base: string; files: string[]; message?: string | undefined },
): Promise<PartialMergeOutcome | 'retry'> {
  const { git, layout } = deps;
  const branch = agentBranch(input.sessionId);
  const tip = await revParse(git, `refs/heads/${branch}`);
  const baseTip = await revParse(git, `refs/heads/${input.base}`);
  if (!tip || !baseTip) return { status: 'refused', detail: `branch '${tip ? input.base : branch}' does not exist`, files: [] };
  const state = await readMergeState(layout, input.sessionId);
  const c = await classifyRequest(git, layout, { ...input, tip, baseTip, alreadyMerged: state.merged_files });
  const userDir = c.write.length ? await checkedOutAt(git, input.base) : null;
  const blocked = userDir ? await dirtyPaths(git, userDir, { untracked: true, paths: c.write }) : [];
  if (blocked.length) {
    return { status: 'refused', detail: `Refusing partial merge: ${userDir} has uncommitted changes to ${blocked.length} target file(s): ${blocked.slice(0, 10).join(', ')}`, files: blocked };
  }
  let commit = '';
  if (c.write.length) {
    // One line whatever the client sent: a message or a file name cannot add trailers or a body.
    const message = oneLine(input.message || `Partial merge from ${branch}: ${c.write.slice(0, 10).join(', ')}${c.write.length > 10 ? ', …' : ''}`, 500);
    commit = await commitOnto(git, baseTip, await readEntries(git, tip, c.write), message);
    const moved = await git.run(['update-ref', '-m', `svc: ${message}`, `refs/heads/${input.base}`, commit, baseTip], { allowFail: true });
    if (moved.code !== 0) return 'retry';
    // Keep the user's checkout consistent: bring just the merged paths of index and files up to the new commit.
    if (userDir) await git.run(['checkout', commit, '--', ...c.write], { cwd: userDir, env: LITERAL });
  }
  const merged = [...c.write, ...c.unchanged];
  if (merged.length) {
    await writeMergeState(layout, {
      session_id: input.sessionId,
      merged_files: [...new Set([...state.merged_files, ...merged])].sort(),
      merge_commits: commit ? [...state.merge_commits, commit] : state.merge_commits,
      last_merged_at: deps.clock.iso(),
    });
  }
  return { status: 'ok', merged_files: merged.sort(), skipped_already_merged: c.skipped, uncommitted_files: c.uncommitted, conflicting_files: c.conflicting, commit_sha: commit };
}

// Read what classifyFiles needs: the three trees' entries for the files and the worktree's uncommitted paths.
async function classifyRequest(git: Git, layout: SddLayout, r: { sessionId: string; files: string[]; tip: string; baseTip: string; alreadyMerged: string[] }) {
  const fork = (await git.run(['merge-base', r.baseTip, r.tip], { allowFail: true })).stdout.trim();
  const wt = layout.worktree(r.sessionId);
  return classifyFiles({
    files: r.files,
    alreadyMerged: new Set(r.alreadyMerged),
    dirtyInWorktree: new Set(existsSync(wt) ? await dirtyPaths(git, wt, { untracked: true, paths: r.files }) : []),
    branch: await readEntries(git, r.tip, r.files),
    base: await readEntries(git, r.baseTip, r.files),
    fork: fork ? await readEntries(git, fork, r.files) : new Map<string, TreeEntry>(),
  });
}

// Blob entries of `commit` for exactly these paths (folders and submodules are not files).
async function readEntries(git: Git, commit: string, paths: readonly string[]): Promise<Map<string, TreeEntry>> {
  const out = (await git.run(['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...paths], { env: LITERAL })).stdout;
  const map = new Map<string, TreeEntry>();
  const wanted = new Set(paths);
  for (const line of out.split('\0')) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(line);
    if (m && wanted.has(m[3]!)) map.set(m[3]!, { mode: m[1]!, oid: m[2]! });
  }
  return map;
}

// A commit on top of `parent` with these entries replaced, built in a private index (no work tree involved).
async function commitOnto(git: Git, parent: string, entries: ReadonlyMap<string, TreeEntry>, message: string): Promise<string> {
  const tmp = await mkdtemp(join(tmpdir(), 'svc-index-'));
  const env = { GIT_INDEX_FILE: join(tmp, 'index') };
  try {
    await git.run(['read-tree', parent], { env });
    const info = [...entries].map(([path, e]) => `${e.mode} ${e.oid}\t${path}\0`).join('');
    await git.run(['update-index', '-z', '--index-info'], { env, input: info });
    const tree = (await git.run(['write-tree'], { env })).stdout.trim();
    return (await git.run(['commit-tree', tree, '-p', parent, '-m', message], { env: { ...env, ...(await identityEnv(git)) } })).stdout.trim();
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
