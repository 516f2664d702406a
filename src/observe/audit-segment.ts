// A segment of the audit chain walked on its bytes: a line in the writer's shape is checked there
// (audit-line.ts, audit-line-sign.ts), any other line by the parsing walk (audit-walk.ts). Also a segment's
// summary, walked on its own (in a worker thread, or remembered by `compliance check`): when a summary's
// first record links to where the walk stands, the walk may take the summary for the segment's records,
// since walking them would end in the same state.
import { isUtf8 } from 'node:buffer';
import { GENESIS_PREV } from './audit-hash.ts';
import { HMAC, PREV, lineMatch, matchLine, sameAscii, sameBytes, type LineMatch } from './audit-line.ts';
import { lineSigner, type LineSigner } from './audit-line-sign.ts';
import { checkLine, parseRecord, signerOf, walkParsed, type ChainWalk } from './audit-walk.ts';

/**
 * Check one segment's text or bytes against the walk (pure; mutates `w`). An unreadable line is
 * tolerated when nothing follows it or the next record links to the record before it (it hides no
 * record); any other bad line is the first broken link.
 */
export function walkSegment(key: Uint8Array | null, w: ChainWalk, file: string, text: string | Buffer): ChainWalk {
  if (typeof text !== 'string') return walkBytes(key, w, file, text);
  // A well-formed string is its UTF-8 bytes exactly; a lone surrogate is not, and keeps the parsing walk.
  if ((text as string & { isWellFormed(): boolean }).isWellFormed()) return walkBytes(key, w, file, Buffer.from(text, 'utf8'));
  return walkParsed(key, w, file, text);
}

// Line by line: a line in the writer's shape is checked on its bytes (audit-line.ts); any other line, and
// any the fast path does not accept, is decoded and parsed (a '\n' never falls inside a UTF-8 sequence,
// so a line decodes alone as it does within the whole text).
function walkBytes(key: Uint8Array | null, w: ChainWalk, file: string, bytes: Buffer): ChainWalk {
  const sign = key ? signerOf(key) : null;
  const fast = key ? lineSignerOf(key) : null;
  const { buf: b, start } = fast ? fast.load(bytes) : { buf: bytes, start: 0 };
  const utf8 = isUtf8(bytes);
  const m = scratch;
  // The hmac of the last record taken on its bytes, kept as offsets until the walk's state needs the string.
  let held = -1;
  let heldEnd = -1;
  let line = 0;
  for (let p = start; p < b.length && !w.broken;) {
    line++;
    let end = utf8 && w.pending.length === 0 ? matchLine(b, p, m) : -1;
    if (end >= 0 && linksAndSigns(fast, key !== null, w, b, m, held, heldEnd)) {
      held = m.at[2 * HMAC]! + 1;
      heldEnd = m.at[2 * HMAC + 1]! - 1;
      w.seq = m.seq;
      w.records += 1;
      p = end + 1;
      continue;
    }
    if (held >= 0) w.hmac = b.toString('utf8', held, heldEnd);
    held = -1;
    if (end < 0) end = lineEnd(b, p);
    checkLine(sign, w, file, line, b.toString('utf8', p, end));
    p = end + 1;
  }
  if (held >= 0) w.hmac = b.toString('utf8', held, heldEnd);
  return w;
}

// The matched line follows the walk (seq, prev) and, with a key, carries the HMAC of its signed text.
function linksAndSigns(fast: LineSigner | null, keyed: boolean, w: ChainWalk, b: Buffer, m: LineMatch, held: number, heldEnd: number): boolean {
  if (m.seq !== w.seq + 1) return false;
  const ps = m.at[2 * PREV]! + 1;
  const pe = m.at[2 * PREV + 1]! - 1;
  if (held >= 0 ? !sameBytes(b, held, heldEnd, ps, pe) : !sameAscii(b, ps, pe, w.hmac)) return false;
  if (!keyed) return true;
  const hmac = fast!.sign(b, m);
  return hmac !== null && sameAscii(b, m.at[2 * HMAC]! + 1, m.at[2 * HMAC + 1]! - 1, hmac);
}

const lineEndOf = (t: string) => { const nl = t.indexOf('\n'); return nl < 0 ? t.length : nl; };
function lineEnd(b: Buffer, p: number): number {
  const nl = b.indexOf(0x0a, p);
  return nl < 0 ? b.length : nl;
}

const scratch = lineMatch();
// One line signer per key (its pads and arena made once), not one per segment.
const lineSigners = new WeakMap<Uint8Array, LineSigner>();
function lineSignerOf(key: Uint8Array): LineSigner {
  let s = lineSigners.get(key);
  if (!s) lineSigners.set(key, (s = lineSigner(key)));
  return s;
}

/**
 * A segment walked on its own: its first record's seq and prev, its last seq and hmac, its record count.
 * Null when the segment has anything but records that link to each other and carry good HMACs (an
 * unreadable line included): such a segment is walked in the chain, which names what is wrong with it.
 */
export interface SegmentSummary {
  records: number;
  firstSeq: number;
  firstPrev: string;
  lastSeq: number;
  lastHmac: string;
}

/** Walk one segment's text on its own (pure); null unless every line is a good record linked to the one before. */
export function summariseSegment(key: Uint8Array | null, text: string | Buffer): SegmentSummary | null {
  if (text.length === 0) return { records: 0, firstSeq: 0, firstPrev: GENESIS_PREV, lastSeq: 0, lastHmac: GENESIS_PREV };
  const first = parseRecord(typeof text === 'string' ? text.slice(0, lineEndOf(text)) : text.toString('utf8', 0, lineEnd(text, 0)));
  if (typeof first !== 'object') return null;
  const w: ChainWalk = { seq: first.seq - 1, hmac: first.prev, records: 0, pending: [], warnings: [] };
  walkSegment(key, w, '', text);
  if (w.broken || w.pending.length > 0 || w.warnings.length > 0) return null;
  return { records: w.records, firstSeq: first.seq, firstPrev: first.prev, lastSeq: w.seq, lastHmac: w.hmac };
}

/**
 * Take a summary for its segment's records when its first record links to where the walk stands (and no
 * unreadable line waits to be linked over): the walk ends where walking the segment would have. False
 * (walk unchanged) otherwise: the caller walks the segment's text.
 */
export function applySummary(w: ChainWalk, s: SegmentSummary): boolean {
  if (w.broken || w.pending.length > 0) return false;
  if (s.records === 0) return true;
  if (s.firstSeq !== w.seq + 1 || s.firstPrev !== w.hmac) return false;
  w.seq = s.lastSeq;
  w.hmac = s.lastHmac;
  w.records += s.records;
  return true;
}
