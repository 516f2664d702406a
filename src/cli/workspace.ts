import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitBaseEnv } from '../store/git-cli.ts';
import { hardenedArgs } from '../store/git-harden.ts';
import { BOARD_DIRS, restoreFromRef, SERVER_RESTORES, type RestoreResult } from '../store/restore.ts';
import { sddLayout } from '../store/layout.ts';
import { CliError } from './args.ts';
import { serverAlive } from './server-lock.ts';

/** The package's `.sdd-template/` folder (next to src/ and dist/). */
export const TEMPLATE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '.sdd-template');

/** Resolve and check the work tree: a git work tree with at least one commit, else a CliError naming the path. */
export function checkWorkTree(workdir: string): { root: string; gitCommonDir: string } {
  const dir = resolve(workdir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError(`${dir}: no such directory`);
  // One git process (each costs ~10 ms here): the top level, the common git dir, then HEAD's commit; a
  // folder outside a work tree fails the whole (128), a repository without a commit only the last (1).
  let out: string;
  try {
    out = git(dir, 'rev-parse', '--show-toplevel', '--git-common-dir', '--verify', '--quiet', 'HEAD^{commit}');
  } catch (err) {
    const { status, stdout } = err as { status?: number; stdout?: string };
    if (status === 1 && String(stdout ?? '').trim()) throw new CliError(`${String(stdout).trim().split('\n')[0]} has no commit yet (make a first commit, then run svc again)`);
    throw new CliError(`${dir} is not a git work tree (run 'git init' and make a first commit)`);
  }
  const [root, commonDir] = out.split('\n') as [string, string];
  return { root, gitCommonDir: resolve(dir, commonDir) }; // relative to where git ran
}

/** What initSdd did: `.sdd` was new, and what it wrote back from refs/sdd/state (null: a live server owns the tree). */
export interface SddInit {
  fresh: boolean;
  restored: RestoreResult | null;
}

/**
 * Make `<root>/.sdd`: first the files refs/sdd/state holds and the disk lacks (a clone with a fetched
 * ref gets its config, tenants and audit log back; with `board`, its task files too), then
 * `.sdd-template/` where files are still missing. `svc up` (`server`) restores the per-task folders itself,
 * under its lock. A live server owns its tree (it restored at its start): then only the template is added.
 */
export function initSdd(root: string, o: { board?: boolean; server?: boolean } = {}): SddInit {
  const layout = sddLayout(root);
  const fresh = !existsSync(layout.sdd);
  mkdirSync(layout.sdd, { recursive: true });
  const restored = serverAlive(layout.serverLock, layout.serverInfo) ? null : restoreFromRef(layout, o.board ? {} : { skipDirs: o.server ? SERVER_RESTORES : BOARD_DIRS });
  cpSync(TEMPLATE_DIR, layout.sdd, { recursive: true, force: false, errorOnExist: false, filter: (src) => src !== join(TEMPLATE_DIR, 'gitignore') });
  // npm leaves `.gitignore` files out of a packed tarball: the template keeps it as `gitignore`.
  if (!existsSync(join(layout.sdd, '.gitignore'))) cpSync(join(TEMPLATE_DIR, 'gitignore'), join(layout.sdd, '.gitignore'));
  for (const d of ['tasks', 'runtime/signals', 'runtime/agents', 'runtime/logs', 'runtime/prompts', 'secrets', 'worktrees']) mkdirSync(join(layout.sdd, d), { recursive: true });
  // Secrets, logs and prompts are this user's alone, whatever created the folders (an older svc, a copy, a umask).
  for (const d of ['secrets', 'runtime', 'runtime/signals', 'runtime/agents', 'runtime/logs', 'runtime/prompts']) chmodSync(join(layout.sdd, d), 0o700);
  return { fresh, restored };
}

/** Add `.sdd/` to `.git/info/exclude` so agents' commits never carry state. */
export function excludeSdd(gitCommonDir: string): void {
  const file = join(gitCommonDir, 'info', 'exclude');
  mkdirSync(dirname(file), { recursive: true });
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.split('\n').some((l) => l.trim() === '.sdd/' || l.trim() === '/.sdd/')) return;
  appendFileSync(file, `${text && !text.endsWith('\n') ? '\n' : ''}/.sdd/\n`);
}

// Hardened like every server git call (src/store/git-harden.ts), before the root is even known.
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...hardenedArgs(cwd), ...args], { cwd, env: gitBaseEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

/** `8 task files and 3 other files` for a restore. */
export function restoredWords(r: RestoreResult): string {
  const other = r.paths.length - r.tasks;
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? '' : 's'}`;
  return [r.tasks ? n(r.tasks, 'task file') : '', other ? n(other, r.tasks ? 'other file' : 'file') : ''].filter(Boolean).join(' and ');
}
