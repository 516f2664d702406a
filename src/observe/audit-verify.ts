// Verification of the audit chain: every segment in filename order, every link, every HMAC (the HMACs
// only with the key; without it, in a clone, the hash links `seq` and `prev` are all that can be checked).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SddLayout } from '../store/layout.ts';
import { auditHmac, GENESIS_PREV, listSegments, type AuditRecord } from './audit.ts';
import { loadAuditKey } from './audit-key.ts';

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
  for (let i = 0; i < lines.length && !w.broken; i++) checkLine(key, w, file, i + 1, lines[i] ?? '');
  return w;
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

function checkLine(key: Uint8Array | null, w: ChainWalk, file: string, line: number, text: string): void {
  const rec = parseRecord(text);
  if (rec === 'json') { w.pending.push({ file, line }); return; }
  const at = { file, line, seq: rec === 'shape' ? null : rec.seq };
  const fail = (reason: AuditBreakReason, detail: string) => {
    // A bad link right after unreadable lines: the unreadable line is where the record went missing.
    const p = w.pending[0];
    w.broken = p && reason !== 'hmac mismatch' && reason !== 'invalid record'
      ? { ...p, seq: null, reason: 'invalid JSON', detail: `unreadable line; the next record does not link (${reason})` }
      : { ...at, reason, detail };
  };
  if (rec === 'shape') return fail('invalid record', 'not an audit record (seq, ts, prev, hmac, details)');
  if (rec.seq !== w.seq + 1) return fail('seq gap', `expected seq ${w.seq + 1}, found ${rec.seq}`);
  if (rec.prev !== w.hmac) return fail('prev mismatch', `prev does not equal the hmac of seq ${w.seq}`);
  flushPending(w);
  if (key && auditHmac(key, rec) !== rec.hmac) return fail('hmac mismatch', 'record content does not match its hmac');
  w.seq = rec.seq;
  w.hmac = rec.hmac;
  w.records += 1;
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

/** One segment to verify: its file name and text. */
export interface AuditSegment {
  name: string;
  text: string;
}

/**
 * Verify every segment of `.sdd/audit/` (or the `segments` given, e.g. read from refs/sdd/state).
 * `key: null` checks the links only (a clone has no `.sdd/secrets/audit.key`); without `key` the key
 * file is read, and an unusable one throws AuditKeyError when there are records.
 */
export async function verifyAudit(layout: SddLayout, opts: { key?: Uint8Array | null; segments?: AuditSegment[] } = {}): Promise<AuditVerifyResult> {
  const names = opts.segments ? opts.segments.map((x) => x.name) : await listSegments(layout.auditDir);
  const w = startWalk();
  let key = opts.key;
  for (const [i, name] of names.entries()) {
    // One segment in memory at a time.
    const text = opts.segments ? opts.segments[i]!.text : await readFile(join(layout.auditDir, name), 'utf8');
    if (text === '') continue;
    if (key === undefined) key = await loadAuditKey(layout, { create: false });
    walkSegment(key, w, name, text);
    if (w.broken) break;
  }
  return finishWalk(w, names.length, key !== null);
}

/** One line for people: `.sdd/audit/2026-01-02.jsonl line 7 (seq 42): hmac mismatch: …`. */
export function formatAuditBreak(b: AuditBreak): string {
  return `.sdd/audit/${b.file} line ${b.line}${b.seq === null ? '' : ` (seq ${b.seq})`}: ${b.reason}: ${b.detail}`;
}
