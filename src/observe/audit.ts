// The HMAC-chained audit log: one JSONL segment per UTC day, one chain across all of them.
import { mkdir, open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import type { SddLayout } from '../store/layout.ts';
import { groupWriter, type GroupWriter } from '../store/jsonl.ts';
import type { Faults } from '../store/io.ts';
import { StorageUnavailable } from '../store/types.ts';
import { GENESIS_PREV, recordHmac } from './audit-hash.ts';
import { loadAuditKey } from './audit-key.ts';

export { GENESIS_PREV } from './audit-hash.ts';
/** Segment file names: `<YYYY-MM-DD>.jsonl`; they sort in chain order. */
export const SEGMENT_PATTERN = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

/** What a caller audits. */
export interface AuditEntry {
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  details?: Record<string, unknown>;
}
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
export interface AuditLog {
  /** Load the key and recover the tail now (at server start), so a bad key fails early; returns the tail. */
  open(): Promise<AuditTail>;
  /** Sign and append one record; resolves once it is on disk (write + datasync). */
  append(entry: AuditEntry): Promise<AuditRecord>;
  /** Wait for pending appends and close the segment handle; later appends reject. */
  close(): Promise<void>;
}
export interface AuditDeps {
  layout: SddLayout;
  clock: Clock;
  log: Logger;
  /** Called with the segment's absolute path after each durable append (mark dirty for the state commit). */
  onAppend?: (abs: string) => void;
  /** Disk-trouble hooks for tests (run before each write of a segment). */
  faults?: Faults;
}

/** HMAC-SHA256(key, prev + RFC 8785 JSON of the record without hmac), lowercase hex. */
export function auditHmac(key: Uint8Array, rec: Omit<AuditRecord, 'hmac'>): string {
  return recordHmac(key, rec);
}

/** The signed record that follows `tail` (pure). Details go through JSON so what is hashed is what is stored. */
export function nextRecord(key: Uint8Array, tail: AuditTail, entry: AuditEntry, ts: string): AuditRecord {
  const details = JSON.parse(JSON.stringify(entry.details ?? {})) as Record<string, unknown>;
  const unsigned = {
    seq: tail.seq + 1, ts, actor: entry.actor, action: entry.action, resource_type: entry.resource_type,
    resource_id: entry.resource_id ?? null, details, prev: tail.hmac,
  };
  return { ...unsigned, hmac: auditHmac(key, unsigned) };
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

interface ChainState {
  key: Buffer;
  tail: AuditTail;
  /** Newest segment name; records never go to an older one, even if the clock steps back. */
  segment: string;
  fh?: FileHandle;
  fhName?: string;
  /** Group commit on `fh`: records appended concurrently share one write + datasync. */
  writer?: GroupWriter;
}

/** Open the chain: key, tail recovered from the newest segment holding a record, a torn tail sealed. */
async function openChain(deps: AuditDeps): Promise<ChainState> {
  const dir = deps.layout.auditDir;
  await mkdir(dir, { recursive: true });
  const key = await loadAuditKey(deps.layout, { create: true });
  const names = await listSegments(dir);
  let tail: AuditTail = { seq: 0, hmac: GENESIS_PREV };
  for (let i = names.length - 1; i >= 0; i--) {
    const abs = join(dir, names[i] ?? '');
    const scan = scanTail(await readFile(abs, 'utf8'));
    if (scan.torn && i === names.length - 1) {
      deps.log.warn(`audit: sealing a torn last line in ${abs} (crash during a write)`);
      await appendDurably(abs, '\n');
    }
    if (scan.skipped > (scan.torn ? 1 : 0)) deps.log.error(`audit: ${abs} ends with unreadable lines; run svc audit verify`);
    if (scan.tail) { tail = scan.tail; break; }
  }
  return { key, tail, segment: names.at(-1) ?? '' };
}

async function appendDurably(abs: string, data: string): Promise<void> {
  const fh = await open(abs, 'a');
  try { await writeAll(fh, data); await fh.datasync(); } finally { await fh.close(); }
}

// A short write is rare on a regular file but possible (ENOSPC half-way); finish or throw.
async function writeAll(fh: FileHandle, data: string): Promise<void> {
  const buf = Buffer.from(data, 'utf8');
  for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
}

async function handleFor(dir: string, s: ChainState, name: string, faults?: Faults): Promise<GroupWriter> {
  if (s.fh && s.writer && s.fhName === name) return s.writer;
  await closeSegment(s);
  const abs = join(dir, name);
  const isNew = !(await stat(abs).catch(() => undefined));
  s.fh = await open(abs, 'a');
  s.fhName = name;
  s.writer = groupWriter(s.fh, (await s.fh.stat()).size, { beforeWrite: () => faults?.beforeWrite?.(abs) });
  // A new day file: make its directory entry durable too.
  if (isNew) { const d = await open(dir, 'r'); try { await d.sync(); } finally { await d.close(); } }
  return s.writer;
}

// Records already queued are written (or refused) before the handle closes.
async function closeSegment(s: ChainState): Promise<void> {
  const fh = s.fh;
  s.fh = undefined;
  if (!fh) return;
  await s.writer?.drain();
  await fh.close();
}

function storageFailure(err: unknown, abs: string): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return code === 'ENOSPC' || code === 'EROFS' || code === 'EDQUOT' ? new StorageUnavailable(abs, code) : err;
}

/** The audit log of one `.sdd` tree; appends from this process form one chain, in call order. */
export function createAuditLog(deps: AuditDeps): AuditLog {
  const mutex = new KeyedMutex();
  const dir = deps.layout.auditDir;
  let state: ChainState | undefined;
  let closed = false;

  // Sign and queue in chain order under the mutex; the write + datasync is awaited outside it, shared by concurrent appends.
  async function writeOne(entry: AuditEntry): Promise<{ rec: AuditRecord; abs: string; s: ChainState; synced: Promise<void> }> {
    if (closed) throw new Error('audit log closed');
    const s = state ?? (state = await openChain(deps));
    const ts = new Date(deps.clock.now()).toISOString();
    const day = `${ts.slice(0, 10)}.jsonl`;
    const name = day > s.segment ? day : s.segment;
    const rec = nextRecord(s.key, s.tail, entry, ts);
    const abs = join(dir, name);
    let writer: GroupWriter;
    try {
      writer = await handleFor(dir, s, name, deps.faults);
    } catch (err) {
      state = undefined;
      await closeSegment(s).catch(() => undefined);
      throw storageFailure(err, abs);
    }
    const synced = writer.write(JSON.stringify(rec) + '\n');
    synced.catch(() => undefined); // awaited by the caller; this only keeps an early refusal from counting as unhandled
    s.tail = { seq: rec.seq, hmac: rec.hmac };
    s.segment = name;
    return { rec, abs, s, synced };
  }

  async function appendOne(entry: AuditEntry): Promise<AuditRecord> {
    const { rec, abs, s, synced } = await mutex.run('chain', () => writeOne(entry));
    try {
      await synced;
    } catch (err) {
      // Not on disk, nor anything queued behind it: reopen (recover the tail from the file + seal) on the next append.
      await mutex.run('chain', async () => {
        if (state !== s) return;
        state = undefined;
        await closeSegment(s).catch(() => undefined);
      });
      throw storageFailure(err, abs);
    }
    deps.onAppend?.(abs);
    return rec;
  }

  return {
    open: () => mutex.run('chain', async () => {
      if (closed) throw new Error('audit log closed');
      state ??= await openChain(deps);
      return { ...state.tail };
    }),
    append: appendOne,
    close: () => mutex.run('chain', async () => {
      closed = true;
      if (state) await closeSegment(state);
      state = undefined;
    }),
  };
}
