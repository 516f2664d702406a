import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real git repository in a temp folder: user set, gpg and gc off, one commit on `main`. */
export interface TempRepo {
  dir: string;
  git(...args: string[]): string;
  cleanup(): void;
}

/** Create a temp repository with one commit (README.md) on branch main. */
export function makeRepo(prefix = 'svc-test-'): TempRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@svc.invalid');
  git('config', 'user.name', 'svc test');
  git('config', 'commit.gpgsign', 'false');
  git('config', 'gc.auto', '0');
  writeFileSync(join(dir, 'README.md'), '# temp repo\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'initial');
  return { dir, git, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A temp folder that is not a git repository. */
export function makeTempDir(prefix = 'svc-test-'): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
