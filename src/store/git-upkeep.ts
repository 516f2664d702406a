// What keeps the state ref's repository small and its commits cheap: geometric repacks, gc --auto, and
// which files are too large to re-read at every commit.
import { statSync } from 'node:fs';
import type { Logger } from '../lib/log.ts';
import { STREAM_FROM } from './fast-import.ts';
import type { Git } from './git-cli.ts';

// An append-only log the commit streams from its descriptor (fast-import.ts): its whole size per commit.
export function isLargeLog(abs: string): boolean {
  return abs.endsWith('.jsonl') && (statSync(abs, { throwIfNoEntry: false })?.size ?? 0) >= STREAM_FROM;
}

// Combine the small packs of recent commits geometrically (a pack per commit otherwise piles up).
export async function repack(git: Git, log: Logger): Promise<void> {
  try {
    await git.run(['repack', '--geometric=2', '-d', '-q']);
  } catch (err) {
    log.warn('git repack --geometric failed', { err: (err as Error).message });
  }
}

// Respect the user's gc.auto (our git wrapper forces 0 for every other command); default as git's.
export async function runGc(git: Git, log: Logger): Promise<void> {
  try {
    const conf = await git.run(['config', '--get', 'gc.auto'], { allowFail: true });
    const auto = conf.code === 0 && conf.stdout.trim() ? conf.stdout.trim() : '6700';
    await git.mutate(['-c', `gc.auto=${auto}`, 'gc', '--auto', '--quiet']);
  } catch (err) {
    log.warn('git gc --auto failed', { err: (err as Error).message });
  }
}
