// What makes the server's git never run a program that a repository, or an agent's worktree, chose.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';

/**
 * `-c` settings of every server git invocation: no fsmonitor, no hooks, no transports, no signing,
 * no automatic gc or maintenance, no submodule recursion (command-line config wins over every file).
 */
export const HARDENED_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'protocol.allow=never',
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'submodule.recurse=false',
  'diff.external=',
];

/** The hardened `-c` arguments for a repository at `root`, with `safe.directory` naming exactly the directories used. */
export function hardenedArgs(root: string, cwd?: string): string[] {
  const dirs = [...new Set([root, ...(cwd ? [cwd] : [])])];
  return [...HARDENED_CONFIG, ...dirs.map((d) => `safe.directory=${d}`)].flatMap((kv) => ['-c', kv]);
}

// Plumbing that reads or writes only refs and objects: everything else may read work-tree content or an
// index (even `write-tree` does), where attributes can make git run filters or drivers.
const REF_AND_OBJECT_COMMANDS = new Set([
  'cat-file', 'commit-tree', 'config', 'count-objects', 'fast-import', 'for-each-ref', 'fsck', 'ls-tree', 'merge-base',
  'mktree', 'pack-refs', 'repack', 'rev-list', 'rev-parse', 'show-ref', 'symbolic-ref', 'update-ref', 'var',
]);

/** True when `args` may run attribute-selected filters, diff or merge drivers (they need `driverOverrides`). */
export function touchesContent(args: readonly string[]): boolean {
  const cmd = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c');
  return cmd === undefined || !REF_AND_OBJECT_COMMANDS.has(cmd);
}

/** `git config --show-scope --get-regexp` pattern of every key that names a program a driver runs. */
export const DRIVER_KEYS = '^(diff\\.external|(filter|diff|merge)\\..+\\.(clean|smudge|process|command|textconv|driver))$';

/**
 * `-c` arguments that disable every filter, diff and merge driver defined in repository-level config
 * (`local`, `worktree`): an agent can reach those files, while system and global config (git-lfs and
 * the like) belong to the operator. Empty values make git run nothing (pure; input is the config listing).
 */
export function driverOverrides(listing: string): string[] {
  const out = new Set<string>();
  for (const line of listing.split('\n')) {
    const m = /^(\S+)\t(\S+)/.exec(line);
    if (!m || m[1] === 'system' || m[1] === 'global' || m[1] === 'command') continue;
    const key = m[2]!;
    if (key === 'diff.external') { out.add('diff.external='); continue; }
    const d = /^(filter|diff|merge)\.(.+)\.[a-z]+$/.exec(key);
    if (!d) continue;
    const [, kind, name] = d;
    if (kind === 'filter') for (const k of ['clean=', 'smudge=', 'process=', 'required=false']) out.add(`filter.${name}.${k}`);
    else if (kind === 'diff') for (const k of ['command=', 'textconv=']) out.add(`diff.${name}.${k}`);
    else out.add(`merge.${name}.driver=`);
  }
  return [...out].flatMap((kv) => ['-c', kv]);
}

/** Where `cwd` is a linked worktree under `worktreesDir`: the worktree's top folder, else null (pure). */
export function worktreeTop(worktreesDir: string, cwd: string): string | null {
  const dir = resolve(worktreesDir);
  const c = resolve(cwd);
  if (!c.startsWith(dir + sep)) return null;
  const name = c.slice(dir.length + 1).split(sep)[0];
  return name ? join(dir, name) : null;
}

/**
 * The environment that pins git to a linked worktree's own admin folder in the common dir, so neither
 * the worktree's `.git` file nor the admin folder's `commondir` (both writable by its agent) can point
 * the server at another repository and its config. Null when no admin folder names this worktree.
 */
export function pinnedWorktreeEnv(commonDir: string, top: string): Record<string, string> | null {
  const admin = worktreeAdminDir(commonDir, top);
  return admin ? { GIT_DIR: admin, GIT_COMMON_DIR: commonDir, GIT_WORK_TREE: top } : null;
}

/** The admin folder (`<common>/worktrees/<name>`) whose `gitdir` names the worktree at `top`, or null. */
// `git worktree add` names it after the worktree's base name (a number is added on a clash).
export function worktreeAdminDir(commonDir: string, top: string): string | null {
  const root = join(commonDir, 'worktrees');
  const points = (name: string) => {
    try {
      return resolve(readFileSync(join(root, name, 'gitdir'), 'utf8').trim()) === join(top, '.git');
    } catch {
      return false;
    }
  };
  if (points(basename(top))) return join(root, basename(top));
  const other = existsSync(root) ? readdirSync(root).find((n) => n.startsWith(basename(top)) && points(n)) : undefined;
  return other ? join(root, other) : null;
}

/** Inherited variables that would point git at another repository or make it run a program. */
export const UNSAFE_GIT_ENV: readonly string[] = [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'GIT_SSH', 'GIT_SSH_COMMAND',
  'GIT_ASKPASS', 'GIT_PROXY_COMMAND', 'GIT_ATTR_SOURCE',
];
