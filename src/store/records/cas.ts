// The pure compare-and-set step both stores call, and the text format of a record.
import { keepJsonText } from '../../lib/json-text.ts';
import { RecordMissing, VersionConflict, type AuditEntry, type Effects, type Note, type Versioned, type WriteOptions } from '../types.ts';

/** JSON with recursively sorted object keys, 2-space indent and a trailing newline (diffs well). */
export function stableStringify(value: unknown): string {
  // A sorted view, then the native writer: half the CPU of a replacer, which JSON.stringify calls per value.
  return JSON.stringify(sorted(value), null, 2) + '\n';
}

/**
 * A record's file text held as its compact JSON (keys sorted at every level) and rendered as the file's
 * text (stableStringify's) only when something needs it: the journal carries the compact JSON, the
 * publisher's thread renders what it writes, so the event loop rarely formats a record at all. The
 * rendering is not kept: the state commit reads it once and streams it, and a kept copy (1.6 times the
 * JSON) would stay as long as the record is among the recent texts, old enough to cost a major GC.
 */
export class RecordText {
  constructor(readonly json: string) {}
  get text(): string { return renderRecord(this.json); }
}

/** The file text of a record's compact JSON (what stableStringify writes for the record). */
export const renderRecord = (json: string): string => JSON.stringify(JSON.parse(json), null, 2) + '\n';

/** What a write puts in a file: a text as it is, or a record. */
export type Content = string | RecordText;

/** A value as a write's content: an object as a record, anything else as its stable text. */
export function contentOf(value: unknown): Content {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? new RecordText(JSON.stringify(sorted(value))) : stableStringify(value);
}

/** The text of a write's content. */
export const textOf = (c: Content): string => (typeof c === 'string' ? c : c.text);

// `v` with every object's keys in sorted order; parts already sorted are shared, not copied (records
// keep their key order through parse and spread, so most of a record is taken as it is).
function sorted(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const s = sorted(v[i]);
      if (s !== v[i]) (copy ??= v.slice())[i] = s;
    }
    return copy ?? v;
  }
  // An object with toJSON (a Date) is written by JSON.stringify as its toJSON() value.
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return v;
  const rec = v as Record<string, unknown>;
  // for-in over a plain object walks its own keys in Object.keys order from the shape's cache: no key array
  // per record (a record has 33 keys and is serialised at every change).
  let prev: string | undefined;
  let out: Record<string, unknown> | undefined;
  for (const k in rec) {
    if (!Object.hasOwn(rec, k)) continue;
    if (prev !== undefined && !(prev < k)) return sortedCopy(rec);
    prev = k;
    const s = sorted(rec[k]);
    if (s !== rec[k]) (out ??= { ...rec })[k] = s;
  }
  return out ?? rec;
}

// A copy of `rec` with its keys sorted, each value sorted too.
function sortedCopy(rec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(rec).sort()) out[k] = sorted(rec[k]);
  return out;
}

/**
 * The next record from the current one (its text, or the writer's own parsed copy; undefined: absent):
 * RecordMissing, VersionConflict when `expected` is given and differs, else `mutate` (a throw aborts)
 * with `version + 1`.
 */
export function casStep<T extends Versioned>(abs: string, current: string | T | undefined, mutate: (cur: T) => T, expected?: number): { next: T; record: RecordText } {
  if (current === undefined) throw new RecordMissing(abs);
  const cur = typeof current === 'string' ? (JSON.parse(current) as T) : current;
  if (expected !== undefined && cur.version !== expected) throw new VersionConflict<T>(abs, expected, cur);
  // `mutate` returns a new record and leaves `cur` as it was, so a throw halfway leaves nothing behind. The
  // version goes on that new record (no second copy of it); `cur` itself given back is copied first.
  const made = mutate(cur);
  const next = (made === cur ? { ...made } : made) as T;
  next.version = cur.version + 1;
  const json = JSON.stringify(sorted(next));
  // The record's answer to a client is this text too (json-text.ts): one serialisation per change.
  return { next: keepJsonText(next, json), record: new RecordText(json) };
}

/** A create's third argument: a commit note alone (words or a ChangeNote), or note and effects. */
export function writeOptions(w: Note | WriteOptions | undefined): WriteOptions {
  if (w === undefined) return {};
  return typeof w === 'string' || 'action' in w ? { note: w } : w;
}

/** The audit entries of a change, in order. */
export function auditsOf(effects: Effects | undefined): AuditEntry[] {
  const a = effects?.audit;
  return a === undefined ? [] : Array.isArray(a) ? [...a] : [a as AuditEntry];
}
