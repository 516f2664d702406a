import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KeyedMutex } from '../lib/mutex.ts';
import { join } from 'node:path';
import { lineSession, type LineSession } from './line-session.ts';
import { DRIVER_KEYS, driverOverrides, hardenedArgs, pinnedWorktreeEnv, touchesContent, UNSAFE_GIT_ENV, worktreeTop } from './git-harden.ts';

export interface GitResult<T extends string | Buffer = string> {
  stdout: T;
  stderr: string;
  code: number;
}

export interface GitRunOptions {
  /** Working directory (default: the repository root given to `createGit`). */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Data written to stdin; an async iterable is streamed with backpressure (its error fails the command). */
  input?: string | Uint8Array | AsyncIterable<Uint8Array>;
  /** Resolve with a non-zero exit instead of throwing (for commands whose exit code is an answer). */
  allowFail?: boolean;
  /** Milliseconds before the command is killed (default 120 s). */
  timeoutMs?: number;
}

/** Thrown when a git command exits non-zero and the caller did not allow it. */
export class GitError extends Error {
  constructor(readonly args: string[], readonly result: GitResult<string | Buffer>) {
    super(`git ${args.join(' ')} failed (${result.code}): ${result.stderr.trim() || result.stdout.toString().trim()}`);
    this.name = 'GitError';
  }
}

/** The git CLI for one repository. `run` is unordered; `mutate` runs through one in-process queue. */
export interface Git {
  readonly root: string;
  /** Run a read-only git command now. */
  run(args: string[], opts?: GitRunOptions): Promise<GitResult>;
  /** Run a read-only git command whose output is bytes (a tree object, say); throws on a non-zero exit. */
  bytes(args: string[], opts?: Omit<GitRunOptions, 'allowFail'>): Promise<Buffer>;
  /** Run a git command that changes refs, worktrees or objects, one at a time in arrival order. */
  mutate(args: string[], opts?: GitRunOptions): Promise<GitResult>;
  /** Run several steps as one unit in the mutation queue (e.g. merge-tree + commit-tree + update-ref). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** The repository's absolute common git dir (asked once, then remembered). */
  commonDir(): Promise<string>;
  /** A long-lived ref-and-object command in the repository root (fast-import, update-ref --stdin), hardened. */
  session(args: string[], opts?: { preamble?: string }): LineSession;
}

// Never let a user's config make our plumbing interactive, signed, or auto-gc'd mid-request.
const BASE_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' };
// glibc hands freed heap back to the kernel above 128 KiB by default, and git allocates and frees a zlib
// stream (~256 KiB) per object: `git fast-import` of 2,000 small blobs spent 0.76 s here faulting fresh
// pages in, 0.02 s when the heap is kept (a state commit's whole cost). A short-lived process keeps it.
const MALLOC_ENV = { MALLOC_TRIM_THRESHOLD_: String(256 * 1024 * 1024) };

/** The server's environment without variables that would redirect git or make it run a program. */
export function gitBaseEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !UNSAFE_GIT_ENV.includes(k)) out[k] = v;
  return { ...MALLOC_ENV, ...out, ...BASE_ENV };
}

/**
 * A Git for the repository at `root`. Every invocation is hardened (`git-harden.ts`); commands run in
 * an agent worktree under `<root>/.sdd/worktrees/` are pinned to its admin folder in the common dir.
 */
// Variables the server's own calls pass that do not change which config git reads (identity, literal
// pathspecs, a private index).
const CONFIG_NEUTRAL_ENV = new Set(['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_LITERAL_PATHSPECS', 'GIT_INDEX_FILE']);

/**
 * What the repository-level config files say, as one string (null: an include may pull in other files, so
 * nothing can be assumed; a missing file reads as empty).
 */
export function configKey(files: readonly string[]): string | null {
  let key = '';
  for (const f of files) {
    let text = '';
    try { text = readFileSync(f, 'utf8'); } catch { /* absent */ }
    if (/include/i.test(text)) return null;
    key += `${f}\0${text}\0`;
  }
  return key;
}

/** `commonDir`: the common git dir when the caller knows it already (else asked once, on first use). */
export function createGit(root: string, opts: { worktreesDir?: string; commonDir?: string } = {}): Git {
  const worktreesDir = opts.worktreesDir ?? join(root, '.sdd', 'worktrees');
  const baseEnv = gitBaseEnv();
  const queue = new KeyedMutex();
  let common: string | null = opts.commonDir ?? null;
  // stdout as text, or as bytes with `encoding` 'buffer' (stderr is always text).
  const spawnGit = <T extends string | Buffer = string>(args: string[], o: GitRunOptions, env: Record<string, string>, encoding: 'utf8' | 'buffer' = 'utf8') =>
    new Promise<GitResult<T>>((resolve) => {
      let inputError: Error | undefined;
      const child = execFile('git', args, { cwd: o.cwd ?? root, env, maxBuffer: 256 * 1024 * 1024, timeout: o.timeoutMs ?? 120_000, encoding },
        (err, out: string | Buffer, errOut: string | Buffer) => {
          const stdout = out as T;
          const stderr = errOut.toString();
          const code = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? ((err as unknown as { code: number }).code) : 1) : 0;
          // The input failed (not git hanging up): the command failed, whatever git made of the cut stream.
          if (inputError) resolve({ stdout, stderr: `${stderr}${inputError.message}`, code: code || 1 });
          else resolve({ stdout, stderr, code });
        });
      const input = o.input;
      if (input === undefined || typeof input === 'string' || input instanceof Uint8Array) child.stdin?.end(input);
      else {
        pipeline(Readable.from(input, { objectMode: false }), child.stdin!).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_PREMATURE_CLOSE') return; // git exited first: its exit code says why
          inputError = err;
          child.kill('SIGKILL');
        });
      }
    });
  const commonDir = async (): Promise<string> => {
    if (common) return common;
    const r = await spawnGit([...hardenedArgs(root), 'rev-parse', '--path-format=absolute', '--git-common-dir'], {}, baseEnv);
    if (r.code !== 0) throw new GitError(['rev-parse', '--git-common-dir'], r);
    return (common = r.stdout.trim());
  };
  // The driver check costs a git process (~4-8 ms of the event loop on a small VM) before every command that
  // may run one; in the orchestrator's and a worker's paths that was a quarter of all git processes.
  const drivercache = new Map<string, { key: string; drivers: string[] }>();
  const remember = (cwd: string, key: string, drivers: string[]) => {
    if (drivercache.size >= 256) drivercache.delete(drivercache.keys().next().value!);
    drivercache.set(cwd, { key, drivers });
  };
  // The repository-level config files a command in `cwd` reads: an agent worktree's (pinned), or the root's
  // when its git dir is `<root>/.git` itself; null when not known, or when extra environment that may point
  // git at other config is given (only CONFIG_NEUTRAL_ENV names are not).
  const configFiles = async (cwd: string, pinned: Record<string, string> | null, env: Record<string, string> = {}): Promise<string[] | null> => {
    if (Object.keys(env).some((k) => !CONFIG_NEUTRAL_ENV.has(k))) return null;
    if (pinned) return [join(pinned.GIT_COMMON_DIR!, 'config'), join(pinned.GIT_DIR!, 'config.worktree')];
    if (cwd !== root) return null;
    const dir = await commonDir().catch(() => null);
    return dir === join(root, '.git') ? [join(dir, 'config'), join(dir, 'config.worktree')] : null;
  };
  const exec = async <T extends string | Buffer = string>(args: string[], o: GitRunOptions = {}, encoding: 'utf8' | 'buffer' = 'utf8'): Promise<GitResult<T>> => {
    const cwd = o.cwd ?? root;
    const top = worktreeTop(worktreesDir, cwd);
    const pinned = top ? pinnedWorktreeEnv(await commonDir(), top) : null;
    if (top && !pinned) throw new GitError(args, { stdout: '', stderr: `${top} is not a registered worktree of ${root}`, code: 128 });
    const env = { ...baseEnv, ...pinned, ...o.env };
    const hard = hardenedArgs(root, cwd);
    let drivers: string[] = [];
    if (touchesContent(args)) {
      // The repository-level config files decide the overrides: while they read the same, the last listing holds.
      const files = await configFiles(cwd, pinned, o.env);
      const key = files && configKey(files);
      const known = key !== null ? drivercache.get(cwd) : undefined;
      if (known && known.key === key) drivers = known.drivers;
      else {
        const listing = await spawnGit([...hard, 'config', '--show-scope', '--get-regexp', DRIVER_KEYS], { cwd }, env);
        drivers = driverOverrides(listing.stdout);
        if (key !== null) remember(cwd, key, drivers);
      }
    }
    const result = await spawnGit<T>([...hard, ...drivers, ...args], o, env, encoding);
    if (result.code !== 0 && !o.allowFail) throw new GitError(args, result);
    return result;
  };
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => queue.run('mutations', fn);
  const session = (args: string[], o: { preamble?: string } = {}): LineSession => {
    // Only plumbing that never runs a driver: no work tree, no index, no attributes.
    if (touchesContent(args)) throw new Error(`git ${args.join(' ')}: not a ref-and-object command`);
    return lineSession('git', [...hardenedArgs(root), ...args], { cwd: root, env: baseEnv, ...o });
  };
  const bytes = async (args: string[], o: GitRunOptions = {}) => (await exec<Buffer>(args, { ...o, allowFail: false }, 'buffer')).stdout;
  return { root, run: (args, o) => exec(args, o), bytes, commonDir, mutate: (args, o) => exclusive(() => exec(args, o)), exclusive, session };
}
