// Contracts of the store: record IO with compare-and-set, and the state committer.

/** Any record written with compare-and-set. */
export interface Versioned {
  version: number;
}

/** A compare-and-set lost: the record is at `current.version`, not the one expected. */
export class VersionConflict<T extends Versioned = Versioned> extends Error {
  constructor(readonly path: string, readonly expected: number, readonly current: T) {
    super(`version conflict on ${path}: expected ${expected}, found ${current.version}`);
    this.name = 'VersionConflict';
  }
}

/** The record does not exist (update of a missing file). */
export class RecordMissing extends Error {
  constructor(readonly path: string) {
    super(`record missing: ${path}`);
    this.name = 'RecordMissing';
  }
}

/** The record exists already (exclusive create). */
export class RecordExists extends Error {
  constructor(readonly path: string) {
    super(`record exists: ${path}`);
    this.name = 'RecordExists';
  }
}

/** A write failed for lack of space or a read-only disk; the server answers 503. */
export class StorageUnavailable extends Error {
  constructor(readonly path: string, readonly code: string) {
    super(`storage unavailable (${code}) writing ${path}`);
    this.name = 'StorageUnavailable';
  }
}

/**
 * One change as the state commit message names it: `claim "Fix login" (01jc…) by backend-3f2a`, the
 * actor going into a `Svc-Actor:` trailer. Only `action` is required.
 */
export interface ChangeNote {
  action: string;
  id?: string;
  title?: string;
  /** Who made the change (the principal's actor). */
  actor?: string;
  /** A few words after the id, e.g. "by backend-3f2a". */
  detail?: string;
}

/** A note for the state commit message: a ChangeNote, or a few words ("gates 01jc… passed"). */
export type Note = string | ChangeNote;

export interface UpdateOptions {
  /** Fail with VersionConflict unless the stored version equals this. */
  expectedVersion?: number;
  /** What the change was, for the state commit message. */
  note?: Note;
  /** The audit entry of the change, journaled with it (see RecordStore.hold). */
  audit?: (next: any) => Record<string, unknown>;
}

/** JSON records and JSONL logs under `.sdd`, every write marking its path for the next state commit. */
export interface RecordStore {
  /** Parsed JSON of `abs`, or undefined when the file does not exist. */
  readJson<T>(abs: string): Promise<T | undefined>;
  /** Text of `abs` as last written (a file still being written behind included), or undefined when absent. */
  readText(abs: string): Promise<string | undefined>;
  /** Exclusive create (temp + fsync + link/rename, fails with RecordExists); `audit` is journaled with it. */
  create<T extends Versioned>(abs: string, value: T, note?: Note, audit?: Record<string, unknown>): Promise<T>;
  /**
   * Create every file or none: one journal write for all of them (RecordExists, nothing written, when
   * one exists). Only on a store that owns its tree (the server's); elsewhere create them one by one.
   */
  createAll?<T extends Versioned>(items: readonly { abs: string; value: T; note?: Note; audit?: Record<string, unknown> }[]): Promise<void>;
  /**
   * Compare-and-set under the record's lock: read, optionally compare the version, call `mutate`
   * (pure; may throw to abort, nothing is written), write `version + 1` atomically, return the new record.
   */
  update<T extends Versioned>(abs: string, mutate: (current: T) => T, opts?: UpdateOptions): Promise<T>;
  /** Atomic replace of a whole file (no version check). */
  writeJson(abs: string, value: unknown, note?: Note): Promise<void>;
  /** Append one JSON line with one write; a torn last line from a crash is sealed first. */
  appendJsonl(abs: string, value: unknown, note?: Note): Promise<void>;
  /** Every whole line of a JSONL file (a torn last line is skipped); [] when absent. */
  readJsonl<T>(abs: string): Promise<T[]>;
  /** Delete a file (no error if absent). */
  remove(abs: string, note?: Note): Promise<void>;
  /**
   * Keep the journal lines written from now on until released: a caller that journals a change with
   * its audit entry holds until that entry is in the audit log, so a crash in between leaves the intent
   * for the next start (reconcileAudit). No-op on a shared tree.
   */
  hold(): Hold;
}

/** A hold on the journal (RecordStore.hold). */
export interface Hold {
  /** Let go (once; later calls do nothing). */
  release(): void;
  /** Let go without the work done (shutting down): from now on no checkpoint drops a journal. */
  abandon(): void;
  /** Another hold on the same lines: they are kept until this one and every extension are released. */
  extend(): Hold;
}

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
  /** What the restore before it wrote back, for the report. */
  restored?: { paths: readonly string[]; tasks: number; diskHadNoTasks: boolean };
}

export interface RecoverResult {
  commit: CommitResult | null;
  /** What the start did, for its log line (message.ts startMessage). */
  report: StartReport;
}

/** Turns dirty files under `.sdd` into commits on refs/sdd/state. */
export interface StateCommitter {
  /**
   * Mark a path (absolute, under `.sdd`) changed, with an optional note for the message. `text` is its
   * new content (null: deleted) when the caller knows it; without it the commit reads the file.
   */
  touch(abs: string, note?: Note, text?: string | null): void;
  /** Commit everything dirty now (no-op when clean). Serialised: concurrent calls share one commit. */
  flush(): Promise<CommitResult | null>;
  /**
   * Commit any difference between the files and the ref as one `recover: …` commit (the first commit
   * of the board when there is no ref); never deletes a path that `deletions` does not name.
   */
  recover(opts?: RecoverOptions): Promise<RecoverResult>;
  /** Start the group-commit timer (every commit_interval_ms while dirty). */
  start(): void;
  /** Stop the timer and make the final commit. */
  stop(): Promise<void>;
  /** Current value of refs/sdd/state, or null before the first commit. */
  head(): Promise<string | null>;
  /** Number of paths waiting for the next commit. */
  readonly pending: number;
}
