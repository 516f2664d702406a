// The audit chain's verdict for `check`, walked with the observe verifier. A year of segments is ~500k
// HMACs (seconds), so segments unchanged since an earlier check (same size, mtime, ctime and inode, the
// way git's index trusts a stat) reuse their walk from .sdd/runtime/compliance/audit-verified.json, and
// only new or changed segments, today's above all, are walked again. `svc audit verify` always walks all.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { finishWalk, listSegments, loadAuditKey, startWalk, walkSegment, type AuditVerifyResult } from '../observe/index.ts';
import type { SddLayout } from '../store/index.ts';

type Entry = { size: number; mtime: number; ctime: number; ino: number; fromSeq: number; fromHmac: string; toSeq: number; toHmac: string; records: number };
type Cache = { version: 1; segments: Record<string, Entry> };

const cachePath = (layout: SddLayout) => join(layout.runtime, 'compliance', 'audit-verified.json');

/** Verify `.sdd/audit/` like verifyAudit, reusing the walk of unchanged segments; throws AuditKeyError without a usable key. */
export async function verifyChainCached(layout: SddLayout): Promise<AuditVerifyResult> {
  const names = await listSegments(layout.auditDir);
  const old = await readCache(layout);
  const next: Cache = { version: 1, segments: {} };
  const w = startWalk();
  let key: Uint8Array | undefined;
  for (const name of names) {
    const st = await stat(join(layout.auditDir, name));
    const id = { size: st.size, mtime: st.mtimeMs, ctime: st.ctimeMs, ino: st.ino };
    const hit = old.segments[name];
    if (hit && same(hit, id) && hit.fromSeq === w.seq && hit.fromHmac === w.hmac && w.pending.length === 0) {
      Object.assign(w, { seq: hit.toSeq, hmac: hit.toHmac, records: w.records + hit.records });
      next.segments[name] = hit;
      continue;
    }
    const text = await readFile(join(layout.auditDir, name), 'utf8');
    if (text === '') continue;
    key ??= await loadAuditKey(layout, { create: false });
    const from = { seq: w.seq, hmac: w.hmac, records: w.records, warnings: w.warnings.length };
    walkSegment(key, w, name, text);
    if (w.broken) break;
    // Only a segment that ends cleanly (no unreadable line waiting to be linked over) is remembered.
    if (w.pending.length === 0 && w.warnings.length === from.warnings) {
      next.segments[name] = { ...id, fromSeq: from.seq, fromHmac: from.hmac, toSeq: w.seq, toHmac: w.hmac, records: w.records - from.records };
    }
  }
  if (names.length && !key) await loadAuditKey(layout, { create: false });
  const result = finishWalk(w, names.length);
  if (result.ok) await writeCache(layout, next).catch(() => undefined);
  return result;
}

function same(e: Entry, id: { size: number; mtime: number; ctime: number; ino: number }): boolean {
  return e.size === id.size && e.mtime === id.mtime && e.ctime === id.ctime && e.ino === id.ino;
}

async function readCache(layout: SddLayout): Promise<Cache> {
  try {
    const c = JSON.parse(await readFile(cachePath(layout), 'utf8')) as Cache;
    return c.version === 1 && c.segments ? c : { version: 1, segments: {} };
  } catch {
    return { version: 1, segments: {} };
  }
}

async function writeCache(layout: SddLayout, c: Cache): Promise<void> {
  const path = cachePath(layout);
  await mkdir(join(layout.runtime, 'compliance'), { recursive: true });
  await writeFile(`${path}.tmp`, JSON.stringify(c));
  await rename(`${path}.tmp`, path);
}
