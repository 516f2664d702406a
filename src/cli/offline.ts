import { resolve } from 'node:path';
import { sddLayout, type SddLayout } from '../store/layout.ts';
import type { RunContext } from './command.ts';
import { checkWorkTree, initSdd } from './workspace.ts';

/** The `.sdd` layout of the repository named by --workdir (default: current directory), created if missing. */
export function localLayout(c: RunContext): SddLayout {
  const { root } = checkWorkTree(resolve(String(c.values.workdir ?? process.cwd())));
  initSdd(root);
  return sddLayout(root);
}
