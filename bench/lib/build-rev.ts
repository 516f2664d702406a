// An earlier revision of svc built into a temporary folder, so a benchmark can run it beside the current
// build in the same rounds (same machine, same load): `git archive` of the revision, this checkout's
// node_modules linked in, then tsc. Nothing in the checkout changes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A built revision: its CLI entry and the commit it is. */
export interface BuiltRev { main: string; commit: string; cleanup(): void }

/** Build revision `rev` of the repository at `project` (tsc only; its dependencies are this checkout's). */
export function buildRev(project: string, rev: string): BuiltRev {
  const commit = execFileSync('git', ['-C', project, 'rev-parse', '--verify', `${rev}^{commit}`], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-rev-'));
  execFileSync('/bin/sh', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'sh', project, commit, dir]);
  symlinkSync(join(project, 'node_modules'), join(dir, 'node_modules'), 'dir');
  // tsc writes the files even when today's dependencies' types disagree with the old sources somewhere.
  spawnSync(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
  const main = join(dir, 'dist', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`building ${rev} (${commit}) gave no dist/cli/main.js`);
  return { main, commit, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
