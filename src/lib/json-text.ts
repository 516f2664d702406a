// A value's JSON text kept for a moment once something wrote it (a record's compare-and-set step writes its
// compact JSON for the journal), so the answer to the request that changed it sends that text instead of
// serialising the record again. Only the last few hundred are kept, by identity: a text on every record of
// the board would be ~1.3 KB per changed task for as long as it stays unchanged (130 MB at 100k).
import { isDeepStrictEqual } from 'node:util';

const KEEP = 512;
const texts = new Map<object, string>();

/**
 * Keep `json` as the JSON text of `value`, which must not change afterwards (records never do: each
 * change makes a new one). `json` may order keys differently from `JSON.stringify(value)`, nothing else.
 */
export function keepJsonText<T extends object>(value: T, json: string): T {
  texts.set(value, json);
  if (texts.size > KEEP) texts.delete(texts.keys().next().value!);
  return value;
}

/**
 * The JSON text of `value`: the kept text of a value that has one, a plain object whose members are
 * such values or primitives put together from their texts (`{completed, next}`), else JSON.stringify.
 */
export function jsonText(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const kept = texts.get(value);
  if (kept !== undefined) return checked(value, kept);
  if (Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return JSON.stringify(value);
  let s = '';
  let any = false;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    let t: string | undefined;
    if (v === null) t = 'null';
    else if (typeof v === 'object') {
      t = texts.get(v);
      if (t === undefined) return JSON.stringify(value); // a member without a text: the native writer for all
      any = true;
      t = checked(v, t);
    } else if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) t = JSON.stringify(v);
    else return JSON.stringify(value); // undefined, functions, bigints, non-finite numbers: the native rules
    s += `${s ? ',' : ''}${JSON.stringify(k)}:${t}`;
  }
  return any ? `{${s}}` : JSON.stringify(value);
}

// SVC_CHECK_JSON_TEXT=1 (the test runner sets it): a kept text must say what the value holds now, so a
// record changed in place after its write fails loudly in tests instead of answering stale JSON.
const CHECK = process.env.SVC_CHECK_JSON_TEXT === '1';
function checked(value: object, text: string): string {
  if (CHECK && !isDeepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)))) {
    throw new Error(`json-text: the kept text of a value no longer matches it: ${text.slice(0, 120)}`);
  }
  return text;
}
