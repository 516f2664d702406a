// A bubblewrap sandbox for every agent and gate: its worktree writable, the rest of .sdd invisible.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Git } from '../store/git-cli.ts';
import { worktreeAdminDir } from '../store/git-harden.ts';
import type { SddLayout } from '../store/layout.ts';

/** `agents.sandbox`. */
export type SandboxSetting = 'auto' | 'bwrap' | 'none';

/** How agents run: in bubblewrap, without a sandbox, or not at all (`bwrap` was asked for and does not work). */
export interface SandboxState {
  mode: 'bwrap' | 'none' | 'unavailable';
  /** Why (shown at start, in /status and in session logs). */
  reason: string;
  /** The bwrap executable, when mode is bwrap. */
  bwrap: string | null;
}

/** Where one sandboxed process lives: the paths it may write, and single files it may read in the hidden `.sdd`. */
export interface SandboxPlan {
  bwrap: string;
  /** The `.sdd` folder: hidden as a whole (secrets, runtime, tasks, audit, other worktrees). */
  sdd: string;
  /** The repository's common git dir (read-only but for the parts below). */
  commonDir: string;
  /** The agent's worktree (writable; the process starts here). */
  worktree: string;
  /** `<common>/worktrees/<name>`: the worktree's HEAD, index and logs (writable; config.worktree is not). */
  adminDir: string;
  /** Files or folders inside the hidden tree the process reads (its prompt, the svc shim). */
  readFiles?: readonly string[];
  /** `agents.sandbox_writable`: extra folders bound writable (missing ones are skipped). */
  writable?: readonly string[];
}

/** The bwrap argv that runs `argv` inside the plan's sandbox (pure). Order matters: later mounts cover earlier ones. */
export function sandboxArgv(plan: SandboxPlan, argv: readonly string[]): string[] {
  const g = plan.commonDir;
  const bind = (p: string) => ['--bind', p, p];
  const ro = (p: string) => ['--ro-bind', p, p];
  return [
    plan.bwrap,
    '--die-with-parent', '--unshare-pid', '--unshare-ipc',
    ...ro('/'), '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
    '--tmpfs', plan.sdd,
    ...ro(g),
    // New objects and this branch's ref and reflog; packs, alternates and every other ref stay read-only.
    ...bind(join(g, 'objects')), ...ro(join(g, 'objects', 'pack')), ...ro(join(g, 'objects', 'info')),
    ...bind(join(g, 'refs', 'heads', 'agent')), ...bind(join(g, 'logs', 'refs', 'heads', 'agent')),
    ...bind(plan.adminDir), ...ro(join(plan.adminDir, 'config.worktree')),
    ...bind(plan.worktree),
    ...(plan.readFiles ?? []).flatMap(ro),
    ...(plan.writable ?? []).flatMap(bind),
    '--chdir', plan.worktree,
    '--', ...argv,
  ];
}

/** Create what the plan binds, so bwrap finds every mount point; empty the worktree's own config (pinned read-only). */
export function prepareSandbox(plan: SandboxPlan): SandboxPlan {
  const g = plan.commonDir;
  for (const d of [join(g, 'objects', 'pack'), join(g, 'objects', 'info'), join(g, 'refs', 'heads', 'agent'), join(g, 'logs', 'refs', 'heads', 'agent')]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(join(plan.adminDir, 'config.worktree'), '');
  return { ...plan, writable: (plan.writable ?? []).filter((p) => existsSync(p)) };
}

/** `~/x` → `<home>/x` for `agents.sandbox_writable` entries (pure). */
export function expandHome(paths: readonly string[], home: string | undefined): string[] {
  return paths.map((p) => (home && (p === '~' || p.startsWith('~/')) ? join(home, p.slice(1)) : p));
}

/** The first executable `name` on `pathEnv`, or null. */
export function findExecutable(name: string, pathEnv: string): string | null {
  for (const dir of pathEnv.split(delimiter).filter(Boolean)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch { /* next */ }
  }
  return null;
}

/** Start `bwrap` once with the flags agents get; the reason it cannot be used, or null when it works. */
export function probeBwrap(bwrap: string, timeoutMs = 10_000): Promise<string | null> {
  const args = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--', 'true'];
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, _out, stderr) => {
      resolve(err ? `${bwrap} failed: ${(stderr || err.message).trim().split('\n')[0]}` : null);
    });
  });
}

/** What `agents.sandbox` gives, from the setting and the probe's answer (pure). */
export function decideSandbox(setting: SandboxSetting, bwrap: string | null, failure: string | null): SandboxState {
  if (setting === 'none') return { mode: 'none', reason: 'agents.sandbox is none', bwrap: null };
  const why = bwrap === null ? 'bwrap (Debian package bubblewrap) is not on PATH' : failure;
  if (why === null && bwrap !== null) return { mode: 'bwrap', reason: `bubblewrap (${bwrap})`, bwrap };
  if (setting === 'bwrap') return { mode: 'unavailable', reason: `agents.sandbox is bwrap but ${why}`, bwrap: null };
  return { mode: 'none', reason: `agents.sandbox is auto and ${why}`, bwrap: null };
}

/** Find and probe bubblewrap for `setting` (an IO shell around `decideSandbox`). */
export async function resolveSandbox(setting: SandboxSetting, pathEnv: string): Promise<SandboxState> {
  if (setting === 'none') return decideSandbox(setting, null, null);
  const bwrap = findExecutable('bwrap', pathEnv);
  return decideSandbox(setting, bwrap, bwrap ? await probeBwrap(bwrap) : null);
}

/** What a session's processes need to be wrapped: the orchestrator's sandbox state, git and the `.sdd` folder. */
export interface SandboxDeps {
  sandbox: SandboxState;
  git: Git;
  layout: Pick<SddLayout, 'sdd'>;
  config: { agents: { sandbox_writable: readonly string[] } };
  env: Readonly<Record<string, string | undefined>>;
}

/** A function that wraps an argv to run in the sandbox of the worktree at `worktree` (as is without one). */
export async function sandboxWrapper(deps: SandboxDeps, worktree: string, readFiles: readonly string[] = []): Promise<(argv: readonly string[]) => string[]> {
  const s = deps.sandbox;
  if (s.mode === 'none') return (argv) => [...argv];
  if (s.mode === 'unavailable' || !s.bwrap) throw new Error(`no sandbox: ${s.reason}`);
  const commonDir = await deps.git.commonDir();
  const adminDir = worktreeAdminDir(commonDir, worktree);
  if (!adminDir) throw new Error(`${worktree} is not a registered worktree`);
  const plan = prepareSandbox({
    bwrap: s.bwrap, sdd: deps.layout.sdd, commonDir, worktree, adminDir, readFiles,
    writable: expandHome(deps.config.agents.sandbox_writable, deps.env.HOME),
  });
  return (argv) => sandboxArgv(plan, argv);
}
