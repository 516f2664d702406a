// The pure compare-and-set step both stores call, and the text format of a record.
import { RecordMissing, VersionConflict, type AuditEntry, type Effects, type Note, type Versioned, type WriteOptions } from '../types.ts';

/** JSON with recursively sorted object keys, 2-space indent and a trailing newline (diffs well). */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, sortKeys, 2) + '\n';
}

// A replacer sees every value on the way down, so sorting here sorts every level.
function sortKeys(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
  return out;
}

/**
 * The next record from the current text (undefined: absent): RecordMissing, VersionConflict when
 * `expected` is given and differs, else `mutate` on a copy (a throw aborts) with `version + 1`.
 */
export function casStep<T extends Versioned>(abs: string, current: string | undefined, mutate: (cur: T) => T, expected?: number): { next: T; text: string } {
  if (current === undefined) throw new RecordMissing(abs);
  const cur = JSON.parse(current) as T;
  if (expected !== undefined && cur.version !== expected) throw new VersionConflict<T>(abs, expected, cur);
  // `cur` is freshly parsed, so a mutate that throws halfway leaves nothing behind.
  const next = { ...mutate(cur), version: cur.version + 1 } as T;
  return { next, text: stableStringify(next) };
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
