// A snapshot chunk's records as rows (snapshot.ts, format svc-snapshot/2): the chunk's key list once, then each
// record that has exactly those keys in that order (and its nested keys in order: as its file's text has them) as
// the array of its values; any other record as its file's text. At 100k tasks a third of the bytes of the texts,
// parsed in ~0.6 of the time (0.35–0.41 s against 0.59–0.69 s): each object is built by one literal per key list.

/** Collects a chunk's records: `add` each with its file's text, then `text()`. */
export class RowChunk {
  private keys: string[] | null = null;
  private parts: string[] = [];

  /** `ordered`: the record's keys are in its file's order at every level (snapshot.ts keysInOrder). */
  add(value: unknown, fileText: string, ordered: boolean): void {
    if (ordered && isObject(value)) {
      this.keys ??= Object.keys(value);
      if (hasKeys(value, this.keys)) {
        this.parts.push(JSON.stringify(this.keys.map((k) => value[k])));
        return;
      }
    }
    if (!isObject(value)) throw new Error('snapshot: a record must be a JSON object');
    this.parts.push(fileText);
  }

  get size(): number { return this.parts.length; }

  /** The chunk's JSON: `[keys, row or record, …]`; empties the chunk. */
  text(): string {
    const out = `[${JSON.stringify(this.keys ?? [])},${this.parts.join(',')}]`;
    this.keys = null;
    this.parts = [];
    return out;
  }
}

/** The records of a chunk's JSON text, appended to `out`. Throws on a chunk no writer made. */
export function parseRows(text: string, out: unknown[]): void {
  const items = JSON.parse(text) as unknown[];
  if (!Array.isArray(items) || !Array.isArray(items[0])) throw new Error('snapshot: a chunk without its keys');
  const keys = items[0] as unknown[];
  const build = builderFor(keys);
  for (let i = 1; i < items.length; i++) {
    const v = items[i];
    if (!Array.isArray(v)) out.push(v);
    else if (v.length === keys.length) out.push(build(v));
    else throw new Error(`snapshot: a row of ${v.length} values for ${keys.length} keys`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// Exactly `keys`, in that order, none undefined (JSON drops those: the row would say null).
function hasKeys(v: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in v) if (k !== keys[i++] || v[k] === undefined) return false;
  return i === keys.length;
}

// One object literal per key list (each key a JSON string literal, so no key is code; `__proto__` refused: in a
// literal it would set the prototype), compiled once: every record built by it has the same shape.
const builders = new Map<string, (row: unknown[]) => unknown>();
function builderFor(keys: readonly unknown[]): (row: unknown[]) => unknown {
  const id = JSON.stringify(keys);
  let build = builders.get(id);
  if (!build) {
    if (!keys.every((k) => typeof k === 'string' && k !== '__proto__')) throw new Error('snapshot: a chunk\'s keys are not names');
    build = new Function('r', `return {${keys.map((k, i) => `${JSON.stringify(k)}: r[${i}]`).join(', ')}};`) as (row: unknown[]) => unknown;
    builders.set(id, build);
  }
  return build;
}
