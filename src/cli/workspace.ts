import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitBaseEnv } from '../store/git-cli.ts';
import { hardenedArgs } from '../store/git-harden.ts';
import { CliError } from './args.ts';

/** The package's `.sdd-template/` folder (next to src/ and dist/). */
export const TEMPLATE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '.sdd-template');

/** Resolve and check the work tree: a git work tree with at least one commit, else a CliError naming the path. */
export function checkWorkTree(workdir: string): { root: string; gitCommonDir: string } {
  const dir = resolve(workdir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError(`${dir}: no such directory`);
  let root: string;
  try {
    root = git(dir, 'rev-parse', '--show-toplevel');
  } catch {
    throw new CliError(`${dir} is not a git work tree (run 'git init' and make a first commit)`);
  }
  try {
    git(root, 'rev-parse', '--verify', '--quiet', 'HEAD^{commit}');
  } catch {
    throw new CliError(`${root} has no commit yet (make a first commit, then run svc again)`);
  }
  const common = resolve(root, git(root, 'rev-parse', '--git-common-dir'));
  return { root, gitCommonDir: common };
}

/** Copy `.sdd-template/` into `<root>/.sdd` where files are missing; returns true when `.sdd` was new. */
export function initSdd(root: string): boolean {
  const sdd = join(root, '.sdd');
  const fresh = !existsSync(sdd);
  mkdirSync(sdd, { recursive: true });
  cpSync(TEMPLATE_DIR, sdd, { recursive: true, force: false, errorOnExist: false, filter: (src) => src !== join(TEMPLATE_DIR, 'gitignore') });
  // npm leaves `.gitignore` files out of a packed tarball: the template keeps it as `gitignore`.
  if (!existsSync(join(sdd, '.gitignore'))) cpSync(join(TEMPLATE_DIR, 'gitignore'), join(sdd, '.gitignore'));
  for (const d of ['tasks', 'runtime/signals', 'runtime/agents', 'runtime/logs', 'runtime/prompts', 'secrets', 'worktrees']) mkdirSync(join(sdd, d), { recursive: true });
  // Secrets, logs and prompts are this user's alone, whatever created the folders (an older svc, a copy, a umask).
  for (const d of ['secrets', 'runtime', 'runtime/signals', 'runtime/agents', 'runtime/logs', 'runtime/prompts']) chmodSync(join(sdd, d), 0o700);
  return fresh;
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
