import { execFile } from 'node:child_process';
import { KeyedMutex } from '../lib/mutex.ts';

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface GitRunOptions {
  /** Working directory (default: the repository root given to `createGit`). */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Data written to stdin. */
  input?: string | Uint8Array;
  /** Resolve with a non-zero exit instead of throwing (for commands whose exit code is an answer). */
  allowFail?: boolean;
  /** Milliseconds before the command is killed (default 120 s). */
  timeoutMs?: number;
}

/** Thrown when a git command exits non-zero and the caller did not allow it. */
export class GitError extends Error {
  constructor(readonly args: string[], readonly result: GitResult) {
    super(`git ${args.join(' ')} failed (${result.code}): ${result.stderr.trim() || result.stdout.trim()}`);
    this.name = 'GitError';
  }
}

/** The git CLI for one repository. `run` is unordered; `mutate` runs through one in-process queue. */
export interface Git {
  readonly root: string;
  /** Run a read-only git command now. */
  run(args: string[], opts?: GitRunOptions): Promise<GitResult>;
  /** Run a git command that changes refs, worktrees or objects, one at a time in arrival order. */
  mutate(args: string[], opts?: GitRunOptions): Promise<GitResult>;
  /** Run several steps as one unit in the mutation queue (e.g. merge-tree + commit-tree + update-ref). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

// Never let a user's config make our plumbing interactive, signed, or auto-gc'd mid-request.
const BASE_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' };

/** A Git for the repository at `root`. */
export function createGit(root: string): Git {
  const queue = new KeyedMutex();
  const exec = (args: string[], opts: GitRunOptions = {}) =>
    new Promise<GitResult>((resolve, reject) => {
      const child = execFile(
        'git',
        ['-c', 'commit.gpgsign=false', '-c', 'gc.auto=0', '-c', 'core.hooksPath=/dev/null', ...args],
        { cwd: opts.cwd ?? root, env: { ...process.env, ...BASE_ENV, ...opts.env }, maxBuffer: 256 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, encoding: 'utf8' },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? ((err as unknown as { code: number }).code) : 1) : 0;
          const result = { stdout, stderr, code };
          if (code !== 0 && !opts.allowFail) reject(new GitError(args, result));
          else resolve(result);
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
      else child.stdin?.end();
    });
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => queue.run('mutations', fn);
  return { root, run: exec, mutate: (args, opts) => exclusive(() => exec(args, opts)), exclusive };
}
