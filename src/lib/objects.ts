// Object copies that keep V8's hidden classes shared.
//
// On Node 20 (V8 11.3) an object made by spread (`{ ...src }`) and then given a key `src` lacks, in the
// literal (`{ ...src, key }`) or afterwards, gets a hidden class of its own: one per copy, where one per
// shape is usual. Hidden classes live in the old generation, so each such copy costs a full-GC object,
// and one that points at young objects keeps them alive through every scavenge until the next full GC.
// Keys before the spread (`{ key, ...src }`) and Object.assign share their classes.

/** `{ ...obj, [key]: value }` with a shared hidden class: `obj`'s own keys in order, then `key` (last, or in its place when `obj` has it). */
export function withKey<T extends object, K extends string, V>(obj: T, key: K, value: V): Omit<T, K> & Record<K, V> {
  const out: Record<string, unknown> = {};
  for (const k in obj) if (Object.hasOwn(obj, k)) out[k] = obj[k];
  out[key] = value;
  return out as Omit<T, K> & Record<K, V>;
}
