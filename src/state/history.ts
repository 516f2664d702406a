// The board's history read from refs/sdd/state with git alone (no server): revisions, boards, diffs.
import { createGit, type Git } from '../store/git-cli.ts';
import { ID_PATTERN } from '../store/ids.ts';
import { shardedRel, STATE_REF } from '../store/layout.ts';
import { createBlobReader, type BlobReader } from '../store/index.ts';
import { diffBoards, isoSeconds, parseTask, type BoardDiff, type HistoryRow, type TaskDoc } from './board-diff.ts';
import { historyRows } from './history-log.ts';

/** Why a history question has no answer: no ref, an unknown revision or task, or a bad argument. */
export class HistoryError extends Error {
  constructor(readonly kind: 'no-ref' | 'not-found' | 'usage', message: string) {
    super(message);
    this.name = 'HistoryError';
  }
}

/** A resolved revision: its commit and committer time (ISO, UTC). */
export interface Rev {
  oid: string;
  time: string;
}

export interface LogOptions {
  task?: string;
  /** git's date words: `2 hours ago`, `2026-11-20`. */
  since?: string;
  limit: number;
}

/** Reads of refs/sdd/state (or `ref`) in the repository at `root`; close() ends its git process. */
export interface StateHistory {
  /** A revision: a commit id, `~3` (three commits back), `@{2 hours ago}` (the state then); default the tip. */
  resolve(rev?: string): Promise<Rev>;
  board(rev: Rev): Promise<Map<string, TaskDoc>>;
  task(rev: Rev, id: string): Promise<TaskDoc | null>;
  diff(a: Rev, b: Rev): Promise<BoardDiff>;
  log(opts: LogOptions): Promise<HistoryRow[]>;
  close(): void;
}

/** Open the history of `ref` (default refs/sdd/state) in the repository at `root`. */
export function openHistory(root: string, ref = STATE_REF): StateHistory {
  const git = createGit(root);
  const blobs = createBlobReader(root);
  const revOf = async (oid: string): Promise<Rev> => {
    const ct = (await git.run(['show', '-s', '--format=%ct', oid])).stdout.trim();
    return { oid, time: isoSeconds(Number(ct)) };
  };
  const resolve = async (rev?: string) => {
    if (!/^refs\/[\w./-]+$/.test(ref) || ref.includes('..')) throw new HistoryError('usage', `--ref: not a ref name: ${ref}`);
    const tip = await verify(git, `${ref}^{commit}`);
    if (!tip) throw new HistoryError('no-ref', `no ${ref} in ${root}: fetch it first (git fetch <url> ${ref}:${ref}), or start svc up here once`);
    return revOf(await pick(git, ref, tip, rev));
  };
  return {
    resolve,
    board: (rev) => readBoard(git, blobs, rev.oid),
    async task(rev, id) {
      if (!ID_PATTERN.test(id)) throw new HistoryError('usage', `not a task id: ${JSON.stringify(id).slice(0, 80)}`);
      return parseTask(await blobs.read(`${rev.oid}:.sdd/${shardedRel('tasks', id, '.json')}`));
    },
    diff: (a, b) => diffRevs(git, blobs, a.oid, b.oid),
    async log(opts) {
      await resolve();
      if (opts.task !== undefined && !ID_PATTERN.test(opts.task)) throw new HistoryError('usage', `not a task id: ${JSON.stringify(opts.task).slice(0, 80)}`);
      if (opts.since?.startsWith('-')) throw new HistoryError('usage', `--since: not a date: ${opts.since}`);
      return historyRows({ git, blobs, ref }, opts);
    },
    close: () => blobs.close(),
  };
}

// The commit a revision names. Never lets an argument reach git as an option.
async function pick(git: Git, ref: string, tip: string, rev: string | undefined): Promise<string> {
  if (rev === undefined || rev === '' || rev === ref) return tip;
  if (rev.startsWith('-')) throw new HistoryError('usage', `not a revision: ${rev}`);
  const at = /^@\{(.+)\}$/.exec(rev);
  if (at && /^\d+$/.test(at[1]!)) return need(git, `${ref}~${at[1]}`, rev);
  if (at) {
    const r = await git.run(['rev-list', '-1', '--first-parent', `--before=${at[1]}`, ref]);
    if (!r.stdout.trim()) throw new HistoryError('not-found', `no state commit at or before '${at[1]}'`);
    return r.stdout.trim();
  }
  return need(git, /^[~^]/.test(rev) ? `${ref}${rev}` : rev, rev);
}

async function need(git: Git, spec: string, shown: string): Promise<string> {
  const oid = await verify(git, `${spec}^{commit}`);
  if (!oid) throw new HistoryError('not-found', `unknown revision: ${shown}`);
  return oid;
}

async function verify(git: Git, spec: string): Promise<string | null> {
  const r = await git.run(['rev-parse', '--verify', '-q', '--end-of-options', spec], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

// Every task file of a commit, read through one cat-file process.
async function readBoard(git: Git, blobs: BlobReader, oid: string): Promise<Map<string, TaskDoc>> {
  const { stdout } = await git.run(['ls-tree', '-r', '-z', oid, '--', '.sdd/tasks']);
  const oids = stdout.split('\0').filter((l) => l.includes('\t') && l.endsWith('.json')).map((l) => l.split('\t')[0]!.split(' ')[2]!);
  const tasks = await Promise.all(oids.map((o) => blobs.read(o).then(parseTask)));
  return new Map(tasks.filter((t): t is TaskDoc => t !== null).map((t) => [t.id, t]));
}

const ZERO = /^0+$/;

// Only the task files that differ are read: the diff of two 100k boards costs what changed.
async function diffRevs(git: Git, blobs: BlobReader, a: string, b: string): Promise<BoardDiff> {
  const { stdout } = await git.run(['diff-tree', '-r', '-z', '--no-renames', a, b, '--', '.sdd/tasks']);
  const parts = stdout.split('\0');
  const before = new Map<string, TaskDoc>(), after = new Map<string, TaskDoc>();
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [, , oldOid, newOid] = parts[i]!.slice(1).split(' ');
    if (!parts[i + 1]!.endsWith('.json')) continue;
    const [x, y] = await Promise.all([ZERO.test(oldOid!) ? null : blobs.read(oldOid!), ZERO.test(newOid!) ? null : blobs.read(newOid!)]);
    const t = parseTask(x), u = parseTask(y);
    if (t) before.set(t.id, t);
    if (u) after.set(u.id, u);
  }
  return diffBoards(before, after);
}
