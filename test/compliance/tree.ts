// Fixture trees of fixtures/compliance/ copied into real git repositories whose commits have fixed dates,
// so merge commit ids (and so every output) are the same on every run.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand, type CommandDef } from 'citty';
import { PROJECT } from '../helpers/server.ts';

export const FIXTURES = join(PROJECT, 'fixtures', 'compliance');
export const GOLDEN = join(FIXTURES, 'golden');

const ENV = { GIT_AUTHOR_NAME: 'svc test', GIT_AUTHOR_EMAIL: 'test@svc.invalid', GIT_COMMITTER_NAME: 'svc test', GIT_COMMITTER_EMAIL: 'test@svc.invalid' };

/** A repository holding fixtures/compliance/<name> (its `sdd/` as `.sdd/`); `board` also gets an agent branch merged. */
export function fixtureRepo(name: 'board' | 'empty'): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `svc-compliance-${name}-`)));
  const git = (at: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...ENV, GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at } }).trim();
  git('2026-01-01T00:00:00Z', 'init', '-q', '-b', 'main');
  git('2026-01-01T00:00:00Z', 'config', 'commit.gpgsign', 'false');
  writeFileSync(join(dir, '.git', 'info', 'exclude'), '/.sdd/\n');
  writeFileSync(join(dir, 'README.md'), '# fixture\n');
  git('2026-01-01T00:00:00Z', 'add', 'README.md');
  git('2026-01-01T00:00:00Z', 'commit', '-q', '-m', 'initial');
  const src = join(FIXTURES, name);
  if (existsSync(src)) {
    cpSync(src, dir, { recursive: true });
    if (existsSync(join(dir, 'sdd'))) renameSync(join(dir, 'sdd'), join(dir, '.sdd'));
    if (existsSync(join(dir, '.sdd', 'secrets'))) { chmodSync(join(dir, '.sdd', 'secrets'), 0o700); chmodSync(join(dir, '.sdd', 'secrets', 'audit.key'), 0o600); }
  }
  if (name === 'board') {
    git('2026-01-10T09:00:00Z', 'checkout', '-q', '-b', 'agent/backend-1a2b3c4d');
    writeFileSync(join(dir, 'login.txt'), 'rate limit\n');
    git('2026-01-10T09:00:00Z', 'add', 'login.txt');
    git('2026-01-10T09:00:00Z', 'commit', '-q', '-m', 'Rate-limit failed logins');
    git('2026-01-10T09:00:00Z', 'checkout', '-q', 'main');
    git('2026-01-10T10:00:00Z', 'merge', '-q', '--no-ff', '-m', 'Merge agent/backend-1a2b3c4d: Add login rate limit (task 01jfa0000000000000000login)', 'agent/backend-1a2b3c4d');
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Run `svc compliance …` or `svc cluster …` in this process (a child process costs seconds of tsx start-up
 * here) with --workdir `dir`; stdout is compared byte for byte with fixtures/compliance/golden/<file>, which
 * an earlier process wrote (UPDATE_GOLDEN=1 rewrites it). Only successful commands: failures exit the process.
 */
export async function golden(dir: string, args: string[], file: string): Promise<{ stdout: string; expected: string }> {
  const stdout = await svcOut(dir, args);
  const path = join(GOLDEN, file);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, stdout);
  if (!existsSync(path)) throw new Error(`no golden file ${file}: run with UPDATE_GOLDEN=1 and review it`);
  return { stdout, expected: readFileSync(path, 'utf8') };
}

/** Standard output of a successful `svc compliance|cluster …` run in this process with --workdir `dir`. */
export async function svcOut(dir: string, args: string[]): Promise<string> {
  const [group, ...rest] = args;
  const cmd = group === 'cluster' ? (await import('../../src/cli/cluster.ts')).clusterCommand : (await import('../../src/cli/compliance.ts')).complianceCommand;
  return capture(cmd, [...rest, '--workdir', dir]);
}

async function capture(cmd: CommandDef, rawArgs: string[]): Promise<string> {
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => { out += String(chunk); return true; }) as typeof process.stdout.write;
  try {
    await runCommand(cmd, { rawArgs });
  } finally {
    process.stdout.write = write;
  }
  return out;
}
