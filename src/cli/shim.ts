import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
// Flags of this node process that must not follow into every `svc` an agent runs (debuggers, profilers).
const PRIVATE_FLAG = /^--(inspect|cpu-prof|heap-prof|prof|diagnostic-dir|redirect-warnings)/;
// Those of them whose value may come as the next argument.
const TAKES_VALUE = new Set(['--cpu-prof-dir', '--cpu-prof-name', '--heap-prof-dir', '--heap-prof-name', '--diagnostic-dir', '--redirect-warnings', '--inspect-port']);

/**
 * Write `<dir>/bin/svc`, a script that runs this very svc (same node, same flags, same entry file), and return
 * `<dir>/bin`. The orchestrator puts it first on every agent's PATH, so `svc task complete` works in an agent
 * whether or not svc is installed globally, and always talks the server's version.
 */
export function writeSvcShim(dir: string, argv: { execPath: string; execArgv: readonly string[] } = process): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const self = fileURLToPath(import.meta.url);
  const main = self.replace(/shim\.(ts|js)$/, 'main.$1');
  const flags = argv.execArgv.filter((a, i, all) => !PRIVATE_FLAG.test(a) && !TAKES_VALUE.has(all[i - 1] ?? ''));
  const file = join(bin, 'svc');
  writeFileSync(file, `#!/bin/sh\n# The svc of the server that started this agent (written by svc up).\nexec ${[argv.execPath, ...flags, main].map(quote).join(' ')} "$@"\n`);
  chmodSync(file, 0o755);
  return bin;
}

/** What the shim runs: this svc's package (dist or src, node_modules) and node's own prefix; a sandbox must let agents read them. */
export function shimReads(execPath: string = process.execPath): string[] {
  const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return [pkg, resolve(dirname(execPath), '..')];
}
