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

/**
 * What a write brings along, made durable with it: its audit entry (signed into the chain in write
 * order) and JSON lines appended to other files (archive record, progress lines). On a server's own
 * tree all of it is one journal line; files follow behind the acknowledgement.
 */
export interface Effects {
  /** Its audit entry, or several in order (a complete from open records its implicit claim first). */
  audit?: AuditEntry | readonly AuditEntry[];
  /** `note`: the line's own words for the commit message (a first progress report starts its task: start, then progress). */
  appends?: readonly { abs: string; value: unknown; note?: Note }[];
  /** Files deleted with the write (a queued CLI audit record once it is in the chain). */
  removes?: readonly string[];
}

export interface WriteOptions {
  /** What the change was, for the state commit message. */
  note?: Note;
  effects?: Effects;
}

export interface UpdateOptions<T> {
  /** Fail with VersionConflict unless the stored version equals this. */
  expectedVersion?: number;
  note?: Note;
  /** The effects of the change, from the new record. */
  effects?: (next: T) => Effects;
  /**
   * Called once the change passed its compare-and-set and is on its way to disk (the owned store: queued
   * for the journal's next group commit; the shared store: written). A write started now joins the same
   * group commit, after this one (finishThenNext's claim).
   */
  queued?(): void;
  /**
   * The caller's own copy of the record as last written, which an owned store (the tree's only writer)
   * takes instead of reading and parsing the file; a shared store reads the file. Kept current by
   * `written`; `mutate` must not change it.
   */
  current?(): T | undefined;
  /** The change is durable; called before the next update of the same record may start. */
  written?(next: T): void;
}

/** JSON records and JSONL logs under `.sdd`, every write marking its path for the next state commit. */
export interface RecordStore {
  /** Parsed JSON of `abs`, or undefined when the file does not exist. */
  readJson<T>(abs: string): Promise<T | undefined>;
  /** Text of `abs` as last written (a file still being written behind included), or undefined when absent. */
  readText(abs: string): Promise<string | undefined>;
  /** The `*.json` files of a folder with their texts (as last written), by name; [] when it is absent. */
  readFolder(dir: string): Promise<[name: string, text: string][]>;
  /** Every whole line of a JSONL file, lines still being written behind included; [] when absent. */
  readJsonl<T>(abs: string): Promise<T[]>;
  /** The records of a JSONL file newest first (lines still being written behind included) until `visit` returns false. */
  scanJsonl<T>(abs: string, visit: (rec: T) => boolean): Promise<void>;
  /** Exclusive create: RecordExists (nothing written) when the file exists. `o`: a commit note, or note and effects. */
  create<T extends Versioned>(abs: string, value: T, o?: Note | WriteOptions): Promise<T>;
  /** Create every file or none (RecordExists, nothing written, when one exists). */
  createAll<T extends Versioned>(items: readonly ({ abs: string; value: T } & WriteOptions)[]): Promise<void>;
  /**
   * Compare-and-set: read, optionally compare the version, call `mutate` (pure; may throw to abort,
   * nothing is written), write `version + 1` atomically with its effects, return the new record.
   */
  update<T extends Versioned>(abs: string, mutate: (current: T) => T, o?: UpdateOptions<T>): Promise<T>;
  /** Atomic replace of a whole file (no version check). */
  writeJson(abs: string, value: unknown, note?: Note): Promise<void>;
  /** Append one JSON line. */
  appendJsonl(abs: string, value: unknown, note?: Note): Promise<void>;
  /** Effects without a record write (progress lines, a CLI's audit record), durable together. */
  emit(effects: Effects, note?: Note): Promise<void>;
  /** Delete a file (no error if absent). */
  remove(abs: string, note?: Note): Promise<void>;
}

/** A RecordStore that owns open handles and background work. */
export interface ClosableRecordStore extends RecordStore {
  close(): Promise<void>;
  /** Acknowledged writes whose file or line is still to be written (a server's store; 0 otherwise). */
  readonly backlog: number;
  /** Journal bytes no checkpoint has made durable in their files yet. */
  readonly journalBytes: number;
}

/** What is audited about a change; the chain (observe/audit.ts) signs it into a record. */
export interface AuditEntry {
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details?: Record<string, unknown>;
}

/**
 * The audit chain as the store sees it (observe/audit.ts implements it): `seal` signs the next record
 * (seq, prev, hmac) in the order journal lines are written; `rewind` undoes seals of a refused batch.
 */
export interface AuditSealer {
  seal(entry: AuditEntry): { abs: string; line: string };
  mark(): unknown;
  rewind(mark: unknown): void;
}

/** Appends signed audit records durably (the shared tree's path; observe's AuditLog). */
export interface AuditAppender {
  append(entry: AuditEntry): Promise<unknown>;
}

// The committer's side (commit results, start report, StateCommitter) lives in committer-types.ts.
export * from './committer-types.ts';
