import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import type { Git } from './git-cli.ts';
import { refCommit } from './git-objects.ts';
import { STATE_REF } from './layout.ts';

/**
 * A bare repository that holds refs/sdd/state and the objects it reaches, nothing else: `/state.git`
 * serves from it, because git's upload-pack hands out any object of its repository asked for by id
 * (protocol v2), so serving from the user's repository would expose their code.
 */
export interface StateMirror {
  readonly gitdir: string;
  /** Resolves once the mirror holds the ref's current value (pushing what it lacks). */
  current(): Promise<void>;
  /** A state commit moved the ref: while someone fetches, bring the mirror up to it soon (debounced). */
  nudge(): void;
  /** Cancel a pending nudge. */
  close(): void;
}

export interface MirrorOptions {
  git: Git;
  gitCommonDir: string;
  log: Logger;
  now?: () => number;
  /** Commits are pushed in the background only this long after the last fetch (default 10 min). */
  warmMs?: number;
  /** A nudge waits this long, so a burst of commits is one push (default 5 s). */
  debounceMs?: number;
}

// Pushes are small packs; combine them geometrically this often so the pack count stays low.
const REPACK_EVERY = 32;
const CONFIG: [string, string][] = [
  ['uploadpack.allowAnySHA1InWant', 'false'],
  ['uploadpack.allowReachableSHA1InWant', 'false'],
  ['uploadpack.allowTipSHA1InWant', 'false'],
  ['uploadpack.allowFilter', 'true'],
  // Every received pack is kept as a pack (no loose objects), gc is ours.
  ['receive.unpackLimit', '1'],
  ['gc.auto', '0'],
  ['core.logAllRefUpdates', 'false'],
];

/**
 * The mirror at `<git common dir>/svc-state.git`, created on first use. A push costs a walk of the
 * changed trees (under a second at 100k tasks), so it runs when someone fetches, and in the background after
 * commits (at most every 5 s) only while fetches keep coming, so a polling teammate finds it current.
 */
export function createStateMirror(o: MirrorOptions): StateMirror {
  const gitdir = join(o.gitCommonDir, 'svc-state.git');
  const now = o.now ?? Date.now;
  const inMirror = (args: string[]) => ['--git-dir', gitdir, ...args];
  let synced: string | null = null;
  let pushes = 0;
  let lastFetch = -Infinity;
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;

  // Created on first use, and again if someone deleted it (then it needs the whole history again).
  const ensure = async () => {
    if (existsSync(join(gitdir, 'HEAD'))) return;
    synced = null;
    await o.git.run(['init', '--bare', '-q', gitdir]);
    for (const [k, v] of CONFIG) await o.git.run(inMirror(['config', k, v]));
  };

  const syncOnce = async () => {
    await ensure();
    const head = await refCommit(o.git, STATE_REF);
    if (!head || head === synced) return;
    // By id, so a ref moving meanwhile cannot make the mirror hold something else; --force follows a
    // ref someone reset. Only objects reachable from `head` travel. After the first push, no thin pack
    // and no delta search: at 100k tasks they made a 100-change push take 7.6–9.8 s instead of
    // 0.75–0.93 s (loaded VM); the mirror's geometric repacks delta-compress later.
    const quick = synced === null ? [] : ['-c', 'pack.window=0'];
    // The hardened git allows no transport; this push goes to our own mirror on the local disk.
    await o.git.run([...quick, '-c', 'protocol.file.allow=always', 'push', '--quiet', '--force', '--no-verify', ...(quick.length ? ['--no-thin'] : []), gitdir, `${head}:${STATE_REF}`], { timeoutMs: 600_000 });
    synced = head;
    if (++pushes % REPACK_EVERY === 0) {
      await o.git.run(inMirror(['repack', '--geometric=2', '-d', '-q']), { allowFail: true });
    }
  };

  // One sync at a time; a call while one waits to start shares it (it reads the ref when it starts).
  const sync = (): Promise<void> => {
    if (queued) return queued;
    const p = chain.then(() => {
      queued = null;
      return syncOnce();
    });
    queued = p;
    chain = p.catch(() => undefined);
    return p;
  };

  return {
    gitdir,
    current() {
      lastFetch = now();
      return sync();
    },
    nudge() {
      if (timer || now() - lastFetch > (o.warmMs ?? 600_000)) return;
      timer = setTimeout(() => {
        timer = null;
        sync().catch((err: Error) => o.log.warn(`state mirror ${gitdir} not updated: ${err.message}`));
      }, o.debounceMs ?? 5000);
      timer.unref();
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
