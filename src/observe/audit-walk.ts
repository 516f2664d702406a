// The pure walk over the audit chain (no IO): every link, every HMAC (links only without the key), the
// first broken link named. Also a segment's summary, walked on its own (in a worker thread, or
// remembered by `compliance check`): when a summary's first record links to where the walk stands, the
// walk may take the summary for the segment's records, since walking them would end in the same state.
import type { AuditRecord } from './audit.ts';
import { GENESIS_PREV, plainJsonText, recordSigner } from './audit-hash.ts';

/** Why a link is broken. */
export type AuditBreakReason = 'invalid JSON' | 'invalid record' | 'seq gap' | 'prev mismatch' | 'hmac mismatch';

/** The first broken link: segment file name (under `.sdd/audit/`), 1-based line, the record's seq (null if unreadable). */
export interface AuditBreak {
  file: string;
  line: number;
  seq: number | null;
  reason: AuditBreakReason;
  detail: string;
}
/** A tolerated oddity: an unreadable line the chain links straight over (a torn write from a crash). */
export interface AuditWarning {
  file: string;
  line: number;
  message: string;
}
export interface AuditVerifyResult {
  ok: boolean;
  /** Records verified (up to the first broken link). */
  records: number;
  segments: number;
  /** seq of the last verified record (0 for an empty log). */
  lastSeq: number;
  /** False when the walk had no key: links were checked, HMACs were not. */
  hmacChecked: boolean;
  firstBroken?: AuditBreak;
  warnings: AuditWarning[];
}

/** Running state of a walk over the chain; `pending` holds unreadable lines not yet linked over. */
export interface ChainWalk {
  seq: number;
  hmac: string;
  records: number;
  pending: { file: string; line: number }[];
  warnings: AuditWarning[];
  broken?: AuditBreak;
}

/** A fresh walk at the genesis of the chain. */
export function startWalk(): ChainWalk {
  return { seq: 0, hmac: GENESIS_PREV, records: 0, pending: [], warnings: [] };
}

const TORN = 'unreadable line skipped: the chain links over it (torn write from a crash)';

/**
 * Check one segment's text against the walk (pure; mutates `w`). An unreadable line is tolerated
 * when nothing follows it or the next record links to the record before it (it hides no record);
 * any other bad line is the first broken link.
 */
export function walkSegment(key: Uint8Array | null, w: ChainWalk, file: string, text: string): ChainWalk {
  const lines = text.split('\n');
  if (text.endsWith('\n') || text === '') lines.pop();
  const sign = key ? signerOf(key) : null;
  for (let i = 0; i < lines.length && !w.broken; i++) checkLine(sign, w, file, i + 1, lines[i] ?? '');
  return w;
}

// One signer per key (its pads computed once), not one per segment.
const signers = new WeakMap<Uint8Array, Sign>();
function signerOf(key: Uint8Array): Sign {
  let s = signers.get(key);
  if (!s) signers.set(key, (s = recordSigner(key)));
  return s;
}

/** End the walk: unreadable lines that nothing followed become warnings. */
export function finishWalk(w: ChainWalk, segments: number, hmacChecked = true): AuditVerifyResult {
  if (!w.broken) flushPending(w);
  const res: AuditVerifyResult = { ok: !w.broken, records: w.records, segments, lastSeq: w.seq, hmacChecked, warnings: w.warnings };
  if (w.broken) res.firstBroken = w.broken;
  return res;
}

function flushPending(w: ChainWalk): void {
  for (const p of w.pending) w.warnings.push({ ...p, message: TORN });
  w.pending = [];
}

type Sign = (rec: object, plain?: boolean) => string;

function checkLine(sign: Sign | null, w: ChainWalk, file: string, line: number, text: string): void {
  const rec = parseRecord(text);
  if (rec === 'json') { w.pending.push({ file, line }); return; }
  if (rec === 'shape') return fail(w, file, line, null, 'invalid record', 'not an audit record (seq, ts, prev, hmac, details)');
  if (rec.seq !== w.seq + 1) return fail(w, file, line, rec.seq, 'seq gap', `expected seq ${w.seq + 1}, found ${rec.seq}`);
  if (rec.prev !== w.hmac) return fail(w, file, line, rec.seq, 'prev mismatch', `prev does not equal the hmac of seq ${w.seq}`);
  if (w.pending.length > 0) flushPending(w);
  if (sign && sign(rec, plainJsonText(text)) !== rec.hmac) return fail(w, file, line, rec.seq, 'hmac mismatch', 'record content does not match its hmac');
  w.seq = rec.seq;
  w.hmac = rec.hmac;
  w.records += 1;
}

function fail(w: ChainWalk, file: string, line: number, seq: number | null, reason: AuditBreakReason, detail: string): void {
  // A bad link right after unreadable lines: the unreadable line is where the record went missing.
  const p = w.pending[0];
  w.broken = p && reason !== 'hmac mismatch' && reason !== 'invalid record'
    ? { ...p, seq: null, reason: 'invalid JSON', detail: `unreadable line; the next record does not link (${reason})` }
    : { file, line, seq, reason, detail };
}

function parseRecord(text: string): AuditRecord | 'json' | 'shape' {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return 'json'; }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'shape';
  const r = v as Record<string, unknown>;
  const ok = Number.isInteger(r.seq) && typeof r.ts === 'string' && typeof r.prev === 'string'
    && typeof r.hmac === 'string' && typeof r.details === 'object' && r.details !== null;
  return ok ? (r as unknown as AuditRecord) : 'shape';
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
export function summariseSegment(key: Uint8Array | null, text: string): SegmentSummary | null {
  if (text === '') return { records: 0, firstSeq: 0, firstPrev: GENESIS_PREV, lastSeq: 0, lastHmac: GENESIS_PREV };
  const nl = text.indexOf('\n');
  const first = parseRecord(nl < 0 ? text : text.slice(0, nl));
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
