// After a crash: audit entries journaled with task writes whose records never reached the audit log.
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import type { SddLayout } from '../store/layout.ts';
import { scanJsonlBackwards } from '../store/jsonl.ts';
import type { AuditIntent } from '../store/journal-plan.ts';
import { listSegments, type AuditEntry, type AuditLog, type AuditRecord } from './audit.ts';

// Records are looked for back to this long before the oldest intent was journaled (clock steps, slow appends).
const MARGIN_MS = 10 * 60_000;

/** Which change an entry is about: resource, action and the version it made (task entries carry one). */
const changeKey = (e: { resource_id?: unknown; action?: unknown; details?: unknown }): string =>
  JSON.stringify([e.resource_id ?? null, e.action ?? null, (e.details as Record<string, unknown> | undefined)?.version ?? null]);

/** The intent as an audit entry, or undefined when the journal line is not one (the file is editable). */
function asEntry(x: Record<string, unknown>): AuditEntry | undefined {
  const { actor, action, resource_type, resource_id, details } = x;
  if (typeof actor !== 'string' || typeof action !== 'string' || typeof resource_type !== 'string') return undefined;
  if (!(typeof resource_id === 'string' || resource_id === null)) return undefined;
  if (details !== undefined && (details === null || typeof details !== 'object' || Array.isArray(details))) return undefined;
  return { actor, action, resource_type, resource_id, details: details as Record<string, unknown> | undefined };
}

/**
 * Append, marked `recovered: true`, every intent whose change has no record in the audit log: the write
 * was journaled (so it happened) but the server died before its audit append. The log is read newest
 * first and only back to a little before the oldest intent. Returns how many records were appended.
 */
export async function reconcileAudit(layout: SddLayout, audit: AuditLog, intents: readonly AuditIntent[], log: Logger): Promise<number> {
  const wanted = new Map<string, AuditEntry>();
  for (const i of intents) {
    const e = asEntry(i.entry);
    if (e) wanted.set(changeKey(e), e);
  }
  if (!wanted.size) return 0;
  const since = intents.reduce((m, i) => Math.min(m, i.at), Infinity) - MARGIN_MS;
  const found = new Set<string>();
  let older = false;
  for (const name of (await listSegments(layout.auditDir)).reverse()) {
    await scanJsonlBackwards<AuditRecord>(join(layout.auditDir, name), (rec) => {
      if (Date.parse(rec.ts) < since) { older = true; return false; }
      const k = changeKey(rec);
      if (wanted.has(k)) found.add(k);
      return found.size < wanted.size;
    });
    if (older || found.size === wanted.size) break;
  }
  let appended = 0;
  for (const [k, e] of wanted) {
    if (found.has(k)) continue;
    await audit.append({ ...e, details: { ...e.details, recovered: true } });
    appended++;
  }
  if (appended) log.warn(`audit: ${appended} change(s) written before a crash had no audit record; appended them now (details.recovered)`);
  return appended;
}
