// The parsing walk over the audit chain (pure): every line through JSON.parse, every link, every HMAC
// (links only without the key), the first broken link named, unreadable lines (torn writes) linked over.
// The reference of the fast path on bytes (audit-segment.ts), which hands it every line it does not take.
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

/** The parsing walk over a segment's text: every line through JSON.parse (the reference the fast path is tested against). */
export function walkParsed(key: Uint8Array | null, w: ChainWalk, file: string, text: string): ChainWalk {
  const lines = text.split('\n');
  if (text.endsWith('\n') || text === '') lines.pop();
  const sign = key ? signerOf(key) : null;
  for (let i = 0; i < lines.length && !w.broken; i++) checkLine(sign, w, file, i + 1, lines[i] ?? '');
  return w;
}

// One signer per key (its pads computed once), not one per segment.
const signers = new WeakMap<Uint8Array, Sign>();
/** The record signer of `key`, made once per key. */
export function signerOf(key: Uint8Array): Sign {
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

/** The HMAC of a parsed record (recordSigner). */
export type Sign = (rec: object, plain?: boolean) => string;

/** Check one line's text against the walk (pure; mutates `w`). */
export function checkLine(sign: Sign | null, w: ChainWalk, file: string, line: number, text: string): void {
  const rec = parseRecord(text);
  if (rec === 'json') { w.pending.push({ file, line }); return; }
  if (rec === 'shape') return fail(w, file, line, null, 'invalid record', 'not an audit record (seq, ts, prev, hmac, details)');
  if (rec.seq !== w.seq + 1) return fail(w, file, line, rec.seq, 'seq gap', `expected seq ${w.seq + 1}, found ${rec.seq}`);
  if (rec.prev !== w.hmac) return fail(w, file, line, rec.seq, 'prev mismatch', `prev does not equal the hmac of seq ${w.seq}`);
  if (w.pending.length > 0) flushPending(w);
  if (sign && signed(sign, rec, text) !== rec.hmac) return fail(w, file, line, rec.seq, 'hmac mismatch', 'record content does not match its hmac');
  w.seq = rec.seq;
  w.hmac = rec.hmac;
  w.records += 1;
}

// A record with no canonical form (a number JSON.parse reads as Infinity) was never signed by a writer: a mismatch.
function signed(sign: Sign, rec: AuditRecord, text: string): string | null {
  try {
    return sign(rec, plainJsonText(text));
  } catch {
    return null;
  }
}

function fail(w: ChainWalk, file: string, line: number, seq: number | null, reason: AuditBreakReason, detail: string): void {
  // A bad link right after unreadable lines: the unreadable line is where the record went missing.
  const p = w.pending[0];
  w.broken = p && reason !== 'hmac mismatch' && reason !== 'invalid record'
    ? { ...p, seq: null, reason: 'invalid JSON', detail: `unreadable line; the next record does not link (${reason})` }
    : { file, line, seq, reason, detail };
}

/** A line parsed as a record, or why it is not one: `json` (unreadable), `shape` (not an audit record). */
export function parseRecord(text: string): AuditRecord | 'json' | 'shape' {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return 'json'; }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'shape';
  const r = v as Record<string, unknown>;
  const ok = Number.isInteger(r.seq) && typeof r.ts === 'string' && typeof r.prev === 'string'
    && typeof r.hmac === 'string' && typeof r.details === 'object' && r.details !== null;
  return ok ? (r as unknown as AuditRecord) : 'shape';
}
