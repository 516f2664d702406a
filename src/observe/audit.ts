// The HMAC-chained audit log: one JSONL segment per UTC day, one chain across all of them.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isoOf, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { withKey } from '../lib/objects.ts';
import { readTail } from '../store/jsonl.ts';
import type { SddLayout } from '../store/layout.ts';
import type { AuditEntry, AuditSealer } from '../store/types.ts';
import { canonicalShape, GENESIS_PREV, recordHmac, recordSigner } from './audit-hash.ts';
import { loadAuditKey } from './audit-key.ts';

export { GENESIS_PREV } from './audit-hash.ts';
/** Segment file names: `<YYYY-MM-DD>.jsonl`; they sort in chain order. */
export const SEGMENT_PATTERN = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

export type { AuditEntry };
/** One line of a segment. */
export interface AuditRecord {
  seq: number;
  ts: string;
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details: Record<string, unknown>;
  prev: string;
  hmac: string;
}
/** The end of the chain: the next record gets `seq + 1` and `prev = hmac`. */
export interface AuditTail {
  seq: number;
  hmac: string;
}
/** HMAC-SHA256(key, prev + RFC 8785 JSON of the record without hmac), lowercase hex. */
export function auditHmac(key: Uint8Array, rec: Omit<AuditRecord, 'hmac'>): string {
  return recordHmac(key, rec);
}

/**
 * The signed record that follows `tail` (pure). Details go through JSON (unless they are plain JSON already)
 * so what is hashed is what is stored. `sign` is a chain's signer for `key` (recordSigner: no Hmac object).
 */
export function nextRecord(key: Uint8Array, tail: AuditTail, entry: AuditEntry, ts: string, sign: (rec: Omit<AuditRecord, 'hmac'>) => string = (r) => auditHmac(key, r)): AuditRecord {
  const given = entry.details ?? {};
  const details = canonicalShape(given, 0) ? given : (JSON.parse(JSON.stringify(given)) as Record<string, unknown>);
  const unsigned = {
    seq: tail.seq + 1, ts, actor: entry.actor, action: entry.action, resource_type: entry.resource_type,
    resource_id: entry.resource_id ?? null, details, prev: tail.hmac,
  };
  // withKey, not `{ ...unsigned, hmac }`: one hidden class for every record (src/lib/objects.ts).
  return withKey(unsigned, 'hmac', sign(unsigned));
}

/** The last record of a segment's text (pure): scans back over unreadable lines; `torn` = no final newline. */
export function scanTail(text: string): { tail?: AuditTail; torn: boolean; skipped: number } {
  const torn = text.length > 0 && !text.endsWith('\n');
  const lines = text.split('\n');
  if (!torn) lines.pop();
  for (let i = lines.length - 1, skipped = 0; i >= 0; i--, skipped++) {
    const rec = parseLine(lines[i] ?? '');
    if (rec && Number.isInteger(rec.seq) && typeof rec.hmac === 'string') {
      return { tail: { seq: rec.seq as number, hmac: rec.hmac }, torn, skipped };
    }
  }
  return { torn, skipped: lines.length };
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Segment file names in the audit folder, oldest first; [] when the folder is absent. */
export async function listSegments(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [] as string[];
    throw e;
  });
  return names.filter((n) => SEGMENT_PATTERN.test(n)).sort();
}

/** The chain of a tree, opened at its tail: signs entries into records, in call order. */
export interface AuditChain extends AuditSealer {
  /** The signed record for `entry`, its segment and its line; advances the chain. */
  seal(entry: AuditEntry): { abs: string; line: string; record: AuditRecord };
  mark(): ChainMark;
  rewind(mark: unknown): void;
  readonly tail: AuditTail;
}
/** Where a chain stands: its tail and newest segment. */
export interface ChainMark { tail: AuditTail; segment: string }

/**
 * Open the chain of `layout`: the key (created 0600 when absent) and the tail of the newest segment
 * holding a record. Records never go to a segment older than the newest, even if the clock steps back.
 */
export async function openAuditChain(deps: { layout: SddLayout; clock: Clock; log: Logger }): Promise<AuditChain> {
  const dir = deps.layout.auditDir;
  await mkdir(dir, { recursive: true });
  const key = await loadAuditKey(deps.layout, { create: true });
  const names = await listSegments(dir);
  let tail: AuditTail = { seq: 0, hmac: GENESIS_PREV };
  for (let i = names.length - 1; i >= 0; i--) {
    const abs = join(dir, names[i] ?? '');
    // The end of a segment is enough (days can hold millions of records); the whole file when it is not.
    const end = await readTail(abs, 64 * 1024);
    let scan = scanTail(end.whole ? end.text : end.text.slice(end.text.indexOf('\n') + 1));
    if (!scan.tail && !end.whole) scan = scanTail(await readFile(abs, 'utf8'));
    if (scan.skipped > (scan.torn ? 1 : 0)) deps.log.error(`audit: ${abs} ends with unreadable lines; run svc audit verify`);
    if (scan.tail) { tail = scan.tail; break; }
  }
  let segment = names.at(-1) ?? '';
  const sign = recordSigner(key);
  let segmentOf = '', segmentAbs = ''; // the segment's path, built once a day
  return {
    seal(entry) {
      const ts = isoOf(deps.clock.now());
      const day = `${ts.slice(0, 10)}.jsonl`;
      if (day > segment) segment = day;
      if (segment !== segmentOf) { segmentOf = segment; segmentAbs = join(dir, segment); }
      const record = nextRecord(key, tail, entry, ts, sign);
      tail = { seq: record.seq, hmac: record.hmac };
      return { abs: segmentAbs, line: JSON.stringify(record), record };
    },
    mark: () => ({ tail, segment }),
    rewind(m) { ({ tail, segment } = m as ChainMark); },
    get tail() { return { ...tail }; },
  };
}
