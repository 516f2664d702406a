// Trees for compliance fixtures and the check bench: chained audit segments, task files, EU AI Act records.
import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalizeCjs from 'canonicalize';
import { classifyTask } from '../../src/compliance/index.ts';
import { nextRecord, type AuditRecord, type AuditTail } from '../../src/observe/index.ts';
import { shardedRel } from '../../src/store/index.ts';

export const FIXTURE_KEY = '5f'.repeat(32);
const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string | undefined;

/** Segments `<day>.jsonl` with `perDay` HMAC-chained records each, as the server would write them. */
export function writeAudit(sdd: string, keyHex: string, days: string[], perDay: number, taskIds: string[] = []): number {
  const key = Buffer.from(keyHex, 'hex');
  let tail: AuditTail = { seq: 0, hmac: '0'.repeat(64) };
  mkdirSync(join(sdd, 'audit'), { recursive: true });
  let n = 0;
  for (const day of days) {
    const lines: string[] = [];
    for (let i = 0; i < perDay; i++) {
      const id = taskIds.length ? taskIds[n % taskIds.length]! : `t${n}`;
      const ts = new Date(Date.parse(`${day}T00:00:00Z`) + i * Math.floor(86_400_000 / perDay)).toISOString();
      const rec = nextRecord(key, tail, { actor: 'backend-1a2b3c4d', action: 'task.claim', resource_type: 'task', resource_id: id, details: { from: 'open', to: 'claimed', version: 2 } }, ts);
      tail = { seq: rec.seq, hmac: rec.hmac };
      lines.push(JSON.stringify(rec));
      n++;
    }
    writeFileSync(join(sdd, 'audit', `${day}.jsonl`), `${lines.join('\n')}\n`);
  }
  mkdirSync(join(sdd, 'secrets'), { recursive: true, mode: 0o700 });
  writeFileSync(join(sdd, 'secrets', 'audit.key'), `${keyHex}\n`, { mode: 0o600 });
  return n;
}

/** `n` task files (sharded like the store) and their EU AI Act records; titles cycle through the risk levels. */
export function writeTasks(sdd: string, n: number, startMs: number): string[] {
  const titles = ['Fix typo in README', 'Add retry to the importer', 'Add login rate limit', 'Refactor billing export'];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `01jz${i.toString(36).padStart(22, '0')}`;
    const at = new Date(startMs + i * 1000).toISOString();
    const task = { id, title: titles[i % titles.length]!, description: '', role: 'backend', status: 'closed', version: 5, created_at: at, updated_at: at, completed_at: at, metadata: {} };
    const rel = shardedRel('tasks', id, '.json');
    mkdirSync(join(sdd, rel, '..'), { recursive: true });
    writeFileSync(join(sdd, rel), `${JSON.stringify(task, null, 2)}\n`);
    mkdirSync(join(sdd, 'eu_ai_act'), { recursive: true });
    writeFileSync(join(sdd, 'eu_ai_act', `${id}.json`), `${JSON.stringify(classifyTask(task), null, 2)}\n`);
    ids.push(id);
  }
  return ids;
}

/** The days from `first` (YYYY-MM-DD) for `count` days. */
export function days(first: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => new Date(Date.parse(`${first}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The walk as it was before segments were summarised on threads: one thread, JSON.parse, the
 * canonicalize package and one createHmac per record. The baseline of bench:compliance (intact logs only).
 */
export function referenceWalk(auditDir: string, key: Uint8Array): number {
  let seq = 0;
  let prev = '0'.repeat(64);
  for (const name of readdirSync(auditDir).filter((n) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(n)).sort()) {
    for (const line of readFileSync(join(auditDir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const { hmac, ...rest } = JSON.parse(line) as AuditRecord;
      const want = createHmac('sha256', key).update(rest.prev + (canonicalize(rest) ?? '')).digest('hex');
      if (rest.seq !== seq + 1 || rest.prev !== prev || want !== hmac) throw new Error(`reference walk: ${name} seq ${rest.seq} does not verify`);
      seq = rest.seq;
      prev = hmac;
    }
  }
  return seq;
}
