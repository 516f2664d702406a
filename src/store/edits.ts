// Files people edit while the server runs (config.yaml by hand, tenants.json with `svc tenant`):
// each edit is committed when the server notices it, not at the next start.
import { watch } from 'chokidar';
import type { Logger } from '../lib/log.ts';
import { relToSdd, type SddLayout } from './layout.ts';
import type { StateCommitter } from './types.ts';

/** Watch `files` (absolute, under `.sdd`); a write marks the file for the next state commit. Resolves, once watching, to the closer. */
export async function commitEdits(o: { layout: SddLayout; files: string[]; committer: Pick<StateCommitter, 'touch'>; log: Logger }): Promise<() => Promise<void>> {
  // Deleting one by hand is not a command that deletes it: the next start restores it from the ref.
  const watcher = watch(o.files, { ignoreInitial: true, depth: 0, awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 20 } });
  watcher.on('all', (event, path) => {
    if (event !== 'add' && event !== 'change') return;
    o.committer.touch(path, `edit ${relToSdd(o.layout, path)}`);
  });
  watcher.on('error', (err) => o.log.warn(`watching ${o.files.join(', ')}: ${(err as Error).message}`));
  // An edit made before the watches are in place would be missed until the next start.
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return () => watcher.close();
}
