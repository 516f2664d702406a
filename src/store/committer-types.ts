// Contracts of the state committer: what a commit and a start report, and the committer itself.
import type { SnapshotVerdict } from './snapshot-judge.ts';
import type { EarlyScan } from './start-scan.ts';
import type { Note } from './types.ts';

export interface CommitResult {
  oid: string;
  message: string;
  paths: number;
}

/** What a start did to the ref (recover) and to the disk (restore). */
export interface StartReport {
  /** No refs/sdd/state before this start: the files became its first commit. */
  first: boolean;
  /** Paths (relative to `.sdd`) committed because the file differed from the ref. */
  committed: readonly string[];
  /** Paths a journaled delete removed, committed as deletions. */
  deleted: readonly string[];
  /** Files written back from the ref: task files and the rest. */
  restoredTasks: number;
  restoredOther: number;
  /** The disk had no task file at all before the restore (a clone with a fetched ref). */
  fetched: boolean;
}

export interface RecoverOptions {
  /** Paths (relative to `.sdd`) a journaled delete removed: committed as deletions. */
  deletions?: ReadonlySet<string>;
  /** What a restore before it wrote back, for the report. */
  restored?: { paths: readonly string[]; tasks: number; diskHadNoTasks: boolean };
  /** First write back what the ref holds and the disk lacks (journaled `deletions` excepted), from the same listings. */
  restore?: boolean;
  /**
   * Called once every file is there, with the paths (relative to `.sdd`) this restore wrote, before the files
   * are compared with the ref. Restored files appear whole (linked into place), so a reader may run meanwhile.
   */
  onRestored?: (paths: readonly string[]) => void;
  /** Compare on a thread of its own (start-scan.ts); unset: when the board is large. */
  thread?: boolean;
  /** A comparison `svc up` began before its modules loaded (start-scan.ts scanEarly): taken when it asked the same. */
  early?: EarlyScan | null;
  /** A snapshot of records (snapshot.ts) to judge against the files while comparing them. */
  snapshot?: string;
  /** Called with the verdict on `snapshot` (null: none, or unreadable) once the files are compared, before any commit. */
  onSnapshot?: (verdict: SnapshotVerdict | null) => void;
  /**
   * After a clean stop at the ref's head, a large board's EU AI Act folder (a record per task, which the server
   * only ever creates) is compared by `finishStart()`, not before the recover returns (RecoverResult.rest).
   */
  later?: boolean;
}

export interface RecoverResult {
  commit: CommitResult | null;
  /** What the start did, for its log line (message.ts startMessage). */
  report: StartReport;
  /** The folder (relative to `.sdd`) left for after the start (RecoverOptions.later): `finishStart()` compares it. */
  rest: string | null;
}

/** Turns dirty files under `.sdd` into commits on refs/sdd/state. */
export interface StateCommitter {
  /** Mark a path (absolute, under `.sdd`) changed, with an optional note for the message; the commit reads it. */
  touch(abs: string, note?: Note): void;
  /**
   * A writer that writes files behind (the owned store's publisher) gives what it still holds for a path
   * (null: deleted); a commit asks it first and reads the file only when it holds nothing.
   */
  readThrough(pending: (abs: string) => string | null | undefined): void;
  /** Commit everything dirty now (no-op when clean). Serialised: concurrent calls share one commit. */
  flush(): Promise<CommitResult | null>;
  /**
   * Commit any difference between the files and the ref as one `recover: …` commit (the first commit
   * of the board when there is no ref); never deletes a path that `deletions` does not name.
   */
  recover(opts?: RecoverOptions): Promise<RecoverResult>;
  /** Start the group-commit timer (every commit_interval_ms while dirty). */
  start(): void;
  /**
   * Compare the folder the recover left for after the start (RecoverResult.rest) with the ref, on a thread: its
   * missing files restored, its changed ones marked for the commit. Without it, a stop is not a clean one.
   */
  finishStart(): void;
  /** Resolves once every file has been compared with the ref (the recover's comparison, and finishStart's). */
  readonly compared: Promise<void>;
  /** Stop the timer and make the final commit. */
  stop(): Promise<void>;
  /** Current value of refs/sdd/state, or null before the first commit. */
  head(): Promise<string | null>;
  /** Number of paths not in the ref yet: waiting for the next commit, or in the one running. */
  readonly pending: number;
}
