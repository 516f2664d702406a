// Text written into a byte buffer piece by piece: the pieces' UTF-8 bytes one after the other, no joined
// string first (a joined or concatenated string is flattened, a copy, before V8 writes it).

/** At most how many UTF-8 bytes `pieces` take: three per UTF-16 code unit. */
export function utf8Bound(pieces: readonly string[]): number {
  let units = 0;
  for (const p of pieces) units += p.length;
  return units * 3;
}

/** The exact UTF-8 length of `pieces`. */
export function utf8Length(pieces: readonly string[]): number {
  let n = 0;
  for (const p of pieces) n += Buffer.byteLength(p, 'utf8');
  return n;
}

/** Write `pieces` into `buf` from `at` on (it must have room: utf8Bound); where the bytes end. */
export function writeUtf8(buf: Buffer, at: number, pieces: readonly string[]): number {
  for (const p of pieces) at += buf.write(p, at, 'utf8');
  return at;
}
