// The HMAC of a writer-shaped line (audit-line.ts) from its own bytes: its canonical text is its runs of
// `,"key":value` in another order, put together next to the key pad and hashed with two one-shot digests.
import { createHash, hash } from 'node:crypto';
import { ACTION, ACTOR, CLOSE, COMMA, DETAILS, HMAC, KEYS, OPEN, PREV, RID, RTYPE, SEQ, TS, bytes, type LineMatch } from './audit-line.ts';

const BLOCK = 64;
/** Room for one line's signed text; a longer line (details of kilobytes) goes to the parsing walk. */
const SCRATCH = 8192;

/** A segment's bytes where the fast path reads them: `buf[start..]`, a view of the signer's arena that ends where the segment does. */
export interface Loaded { buf: Buffer; start: number }

/** The fast path's HMAC under one key: `load` a segment, then `sign` each matched line of it. */
export interface LineSigner {
  load(b: Buffer): Loaded;
  /** HMAC-SHA256 of the line's signed text (prev + canonical record, what auditHmac signs), lowercase hex; null when too long. */
  sign(buf: Buffer, m: LineMatch): string | null;
}

/**
 * A signer over an arena that holds the key pad, a scratch area and the segment's bytes side by side,
 * so the signed text is put together from the line's own bytes with copyWithin (one native memmove per
 * run of fields, no view or string per record) and hashed as one view of the same memory.
 */
export function lineSigner(key: Uint8Array): LineSigner {
  const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
  const outer = Buffer.alloc(BLOCK + 32);
  let arena = Buffer.alloc(BLOCK + SCRATCH + (1 << 20));
  for (let i = 0; i < BLOCK; i++) {
    arena[i] = (k[i] ?? 0) ^ 0x36;
    outer[i] = (k[i] ?? 0) ^ 0x5c;
  }
  // One view per message length, made once per arena.
  let views: Buffer[] = [];
  const base = BLOCK + SCRATCH;
  return {
    load(b) {
      if (base + b.length > arena.length) {
        const bigger = Buffer.alloc(base + b.length * 2);
        arena.copy(bigger, 0, 0, BLOCK);
        arena = bigger;
        views = [];
      }
      b.copy(arena, base);
      return { buf: arena.subarray(0, base + b.length), start: base };
    },
    sign(buf, m) {
      const at = m.at;
      // The signed text is the unquoted prev, then the line from its '{' to the end of prev plus '}' (canonicalText):
      // it must fit in the scratch area, or it would overwrite the segment's bytes after it.
      const length = (at[2 * PREV + 1]! - at[2 * PREV]! - 2) + (at[2 * PREV + 1]! - keyAt(at, SEQ) + 1);
      if (buf.buffer !== arena.buffer || length > SCRATCH) return null;
      const o = canonicalText(buf, BLOCK, at);
      const view = (views[o] ??= arena.subarray(0, o));
      // A latin1 digest, one char per byte, written back as bytes is cheaper than a Buffer digest (no Buffer per call).
      outer.write(hash('sha256', view, 'binary'), BLOCK, 32, 'latin1');
      return hash('sha256', outer, 'hex');
    },
  };
}

const keyAt = (at: Int32Array, f: number) => at[2 * f]! - KEYS[f]!.length;

// prev + RFC 8785 text of the line's record at `o`: the line's runs of `,"key":value` in code unit order of
// the keys (details and prev are neighbours in both orders), so as long as the line up to prev, plus one.
// Returns the end.
function canonicalText(a: Buffer, o: number, at: Int32Array): number {
  const run = (s: number, e: number) => { a.copyWithin(o, s, e); o += e - s; };
  run(at[2 * PREV]! + 1, at[2 * PREV + 1]! - 1);
  a[o++] = OPEN;
  run(keyAt(at, ACTION) + 1, at[2 * ACTION + 1]!);
  run(keyAt(at, ACTOR), at[2 * ACTOR + 1]!);
  run(keyAt(at, DETAILS), at[2 * PREV + 1]!);
  run(keyAt(at, RID), at[2 * RID + 1]!);
  run(keyAt(at, RTYPE), at[2 * RTYPE + 1]!);
  a[o++] = COMMA;
  run(keyAt(at, SEQ) + 1, at[2 * SEQ + 1]!);
  run(keyAt(at, TS), at[2 * TS + 1]!);
  a[o++] = CLOSE;
  return o;
}
