// The fast path of the audit walk, on a segment's bytes. A line in exactly the writer's shape
// ({"seq":…,"ts":…,"actor":…,"action":…,"resource_type":…,"resource_id":…,"details":{…},"prev":…,"hmac":…},
// no whitespace, no escape, details already in RFC 8785 form, valid UTF-8) is its own canonical text
// with the fields in another order: its HMAC is computed over its bytes rearranged, with no JSON.parse
// and no string per record. Every other line (and any line this path does not accept) goes to the
// parsing walk, which decides as it always did: this path only ever says "good" where that walk would.
const Q = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
const COLON = 0x3a;
export const OPEN = 0x7b;
export const CLOSE = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Deeper details go to the parsing walk (the canonical-form check there stops at 32 too). */
const MAX_DEPTH = 32;

/** The latin1 bytes of `s`. */
export const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

/** Where one line's values lie: `at[2f]`..`at[2f+1]` (end exclusive, strings with their quotes) for field f. */
export const SEQ = 0, TS = 1, ACTOR = 2, ACTION = 3, RTYPE = 4, RID = 5, DETAILS = 6, PREV = 7, HMAC = 8;
// The writer's order (nextRecord: JSON.stringify of seq, ts, actor, action, resource_type, resource_id, details, prev, hmac).
export const KEYS = ['{"seq":', ',"ts":', ',"actor":', ',"action":', ',"resource_type":', ',"resource_id":', ',"details":', ',"prev":', ',"hmac":'].map(bytes);
const NULL = bytes('null');
const TRUE = bytes('true');
const FALSE = bytes('false');

/** The offsets of a matched line (reused from line to line) and its seq. */
export interface LineMatch { at: Int32Array; seq: number }
export const lineMatch = (): LineMatch => ({ at: new Int32Array(18), seq: 0 });

/**
 * Match the line starting at `p` against the writer's shape; fills `m` and returns the index of its end
 * (its '\n', or the end of `b`), or -1 when the line is anything else. `b` must be valid UTF-8.
 */
export function matchLine(b: Uint8Array, p: number, m: LineMatch): number {
  const at = m.at;
  for (let f = 0; f < 9; f++) {
    p = literal(b, p, KEYS[f]!);
    if (p < 0) return -1;
    at[2 * f] = p;
    if (f === SEQ) p = integer(b, p, false);
    else if (f === DETAILS) p = b[p] === OPEN ? object(b, p, 0) : -1;
    else if (f === RID && b[p] !== Q) p = literal(b, p, NULL);
    else p = string(b, p);
    if (p < 0) return -1;
    at[2 * f + 1] = p;
  }
  if (b[p] !== CLOSE) return -1;
  p++;
  if (p < b.length && b[p] !== 0x0a) return -1;
  let seq = 0;
  for (let i = at[0]!; i < at[1]!; i++) seq = seq * 10 + (b[i]! - ZERO);
  m.seq = seq;
  return p;
}

function literal(b: Uint8Array, p: number, lit: Uint8Array): number {
  if (p < 0 || p + lit.length > b.length) return -1;
  for (let i = 0; i < lit.length; i++) if (b[p + i] !== lit[i]) return -1;
  return p + lit.length;
}

// A string JSON.stringify writes as it stands: no quote or backslash inside, no control character.
function string(b: Uint8Array, p: number): number {
  if (b[p] !== Q) return -1;
  let i = p + 1;
  // Four bytes at a time while none is a quote, a backslash or a control byte (exact SWAR tests:
  // a zero byte in x ^ '""""' or x ^ '\\\\', a byte under 0x20 in x); then byte by byte from that word.
  const v = view(b);
  for (; i + 4 <= b.length; i += 4) {
    const x = v.getUint32(i, true);
    const q = x ^ 0x22222222;
    const s = x ^ 0x5c5c5c5c;
    if ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((x - 0x20202020) & ~x)) & 0x80808080) break;
  }
  for (; i < b.length; i++) {
    const c = b[i]!;
    if (c === Q) return i + 1;
    if (c === BACKSLASH || c < 0x20) return -1;
  }
  return -1;
}

// One DataView per buffer walked (the arena of a segment), made when the buffer changes.
let viewed: Uint8Array | null = null;
let dataView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
function view(b: Uint8Array): DataView {
  if (b !== viewed) {
    viewed = b;
    dataView = new DataView(b.buffer, b.byteOffset, b.length);
  }
  return dataView;
}

// An integer JSON.stringify writes as it stands: no leading zero, no -0, at most 15 digits (exact in a double).
function integer(b: Uint8Array, p: number, signed: boolean): number {
  const neg = signed && b[p] === MINUS;
  const s = neg ? p + 1 : p;
  let i = s;
  while (i < b.length && b[i]! >= ZERO && b[i]! <= NINE) i++;
  const n = i - s;
  if (n === 0 || n > 15 || (b[s] === ZERO && (n > 1 || neg))) return -1;
  return i;
}

function value(b: Uint8Array, p: number, depth: number): number {
  const c = b[p];
  if (c === Q) return string(b, p);
  if (c === OPEN) return object(b, p, depth + 1);
  if (c === OPEN_ARRAY) return array(b, p, depth + 1);
  if (c === 0x74) return literal(b, p, TRUE);
  if (c === 0x66) return literal(b, p, FALSE);
  if (c === 0x6e) return literal(b, p, NULL);
  return integer(b, p, true);
}

// An object in canonical form: keys ASCII (code unit order is byte order) and strictly ascending (no duplicate).
function object(b: Uint8Array, p: number, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  p++;
  if (b[p] === CLOSE) return p + 1;
  let prevKey = -1;
  let prevEnd = -1;
  for (;;) {
    const k = string(b, p);
    if (k < 0 || !asciiAbove(b, prevKey, prevEnd, p, k) || b[k] !== COLON) return -1;
    prevKey = p;
    prevEnd = k;
    p = value(b, k + 1, depth);
    if (p < 0) return -1;
    if (b[p] === CLOSE) return p + 1;
    if (b[p] !== COMMA) return -1;
    p++;
  }
}

function array(b: Uint8Array, p: number, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  p++;
  if (b[p] === CLOSE_ARRAY) return p + 1;
  for (;;) {
    p = value(b, p, depth);
    if (p < 0) return -1;
    if (b[p] === CLOSE_ARRAY) return p + 1;
    if (b[p] !== COMMA) return -1;
    p++;
  }
}

// Key [s, e) (quoted) is all ASCII and sorts after key [ps, pe) (none when ps < 0).
function asciiAbove(b: Uint8Array, ps: number, pe: number, s: number, e: number): boolean {
  for (let i = s + 1; i < e - 1; i++) if (b[i]! >= 0x80) return false;
  if (ps < 0) return true;
  const n = Math.min(pe - ps, e - s) - 1;
  for (let i = 1; i < n; i++) {
    const d = b[s + i]! - b[ps + i]!;
    if (d !== 0) return d > 0;
  }
  // One key is a prefix of the other (up to its closing quote): the longer one sorts after.
  return e - s > pe - ps;
}

/** Bytes [s, e) of `b` equal the string `t` (all ASCII in `b`: one byte per character). */
export function sameAscii(b: Uint8Array, s: number, e: number, t: string): boolean {
  if (e - s !== t.length) return false;
  for (let i = 0; i < t.length; i++) {
    const c = b[s + i]!;
    if (c >= 0x80 || c !== t.charCodeAt(i)) return false;
  }
  return true;
}

/** Bytes [s, e) and [s2, e2) of `b` are the same (in valid UTF-8: the same string). */
export function sameBytes(b: Uint8Array, s: number, e: number, s2: number, e2: number): boolean {
  if (e - s !== e2 - s2) return false;
  for (let i = 0; i < e - s; i++) if (b[s + i] !== b[s2 + i]) return false;
  return true;
}
