// The audit chain's verdict for `check`, walked with the observe verifier (segments on several threads
// when the log is big). Segments unchanged since an earlier check (same size, mtime, ctime and inode,
// the way git's index trusts a stat) reuse their walk from .sdd/runtime/compliance/audit-verified.json,
// and only new or changed segments, today's above all, are walked again. `svc audit verify` walks all.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
// The audit modules themselves, not observe/index.ts (see gather.ts).
import { listSegments } from '../observe/audit.ts';
import { loadAuditKey } from '../observe/audit-key.ts';
import { finishWalk, walkSegmentFiles, type AuditVerifyResult, type SegmentSummary } from '../observe/audit-verify.ts';
import type { SddLayout } from '../store/layout.ts';

type FileId = { size: number; mtime: number; ctime: number; ino: number };
type Entry = FileId & SegmentSummary;
type Cache = { version: 2; segments: Record<string, Entry> };

const cachePath = (layout: SddLayout) => join(layout.runtime, 'compliance', 'audit-verified.json');

/** Verify `.sdd/audit/` like verifyAudit, reusing the walk of unchanged segments; throws AuditKeyError without a usable key. */
export async function verifyChainCached(layout: SddLayout, o: { threads?: number } = {}): Promise<AuditVerifyResult> {
  const dir = layout.auditDir;
  const names = await listSegments(dir);
  const old = await readCache(layout);
  const stats = await Promise.all(names.map((n) => stat(join(dir, n))));
  const ids = new Map<string, FileId>();
  const known = new Map<string, SegmentSummary>();
  names.forEach((name, i) => {
    const st = stats[i]!;
    const id = { size: st.size, mtime: st.mtimeMs, ctime: st.ctimeMs, ino: st.ino };
    ids.set(name, id);
    const hit = old.segments[name];
    if (hit && same(hit, id)) known.set(name, summaryOf(hit));
  });
  const key = names.length ? await loadAuditKey(layout, { create: false }) : null;
  const { w, clean } = await walkSegmentFiles(dir, names, key, { known, sizes: stats.map((st) => st.size), threads: o.threads });
  const result = finishWalk(w, names.length);
  const next: Cache = { version: 2, segments: {} };
  for (const [name, s] of clean) next.segments[name] = { ...ids.get(name)!, ...s };
  if (result.ok) await writeCache(layout, next).catch(() => undefined);
  return result;
}

function summaryOf(e: Entry): SegmentSummary {
  return { records: e.records, firstSeq: e.firstSeq, firstPrev: e.firstPrev, lastSeq: e.lastSeq, lastHmac: e.lastHmac };
}

function same(e: FileId, id: FileId): boolean {
  return e.size === id.size && e.mtime === id.mtime && e.ctime === id.ctime && e.ino === id.ino;
}

async function readCache(layout: SddLayout): Promise<Cache> {
  try {
    const c = JSON.parse(await readFile(cachePath(layout), 'utf8')) as Cache;
    return c.version === 2 && c.segments ? c : { version: 2, segments: {} };
  } catch {
    return { version: 2, segments: {} };
  }
}

async function writeCache(layout: SddLayout, c: Cache): Promise<void> {
  const path = cachePath(layout);
  await mkdir(join(layout.runtime, 'compliance'), { recursive: true });
  await writeFile(`${path}.tmp`, JSON.stringify(c));
  await rename(`${path}.tmp`, path);
}
