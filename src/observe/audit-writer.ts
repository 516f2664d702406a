// One writer per chain: a server holds the lock for its lifetime; a CLI takes it for one append, or,
// when a server holds it, leaves its record in the server's inbox.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { writeFileAtomic } from '../store/atomic.ts';
import type { SddLayout } from '../store/layout.ts';
import { stableStringify } from '../store/records/cas.ts';
import type { AuditEntry } from './audit.ts';
import { createAuditLog } from './audit-log.ts';

const lockOf = (layout: SddLayout) => ({ dir: join(layout.runtime, 'audit-writer'), lock: join(layout.runtime, 'audit-writer.lock') });
const inboxOf = (layout: SddLayout) => join(layout.runtime, 'audit-inbox');
const RETRIES = { retries: 100, minTimeout: 5, maxTimeout: 100, factor: 1.5, randomize: true };

/** Take the audit writer lock (waiting for a CLI that holds it briefly); resolves to its release. */
export async function acquireAuditWriter(layout: SddLayout, log: Logger, wait = true): Promise<() => Promise<void>> {
  const { dir, lock } = lockOf(layout);
  await mkdir(dir, { recursive: true });
  return lockfile.lock(dir, { realpath: false, lockfilePath: lock, stale: 10_000, retries: wait ? RETRIES : 0, onCompromised: (e) => log.error(`audit writer lock compromised: ${e.message}`) });
}

/** Append a record from a CLI command: directly when no server holds the chain, else through the server's inbox. */
export async function appendAuditFromCli(layout: SddLayout, entry: AuditEntry, deps: { clock: Clock; log: Logger }): Promise<'appended' | 'queued'> {
  let release: (() => Promise<void>) | undefined;
  try {
    release = await acquireAuditWriter(layout, deps.log, false);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const name = `${deps.clock.now()}-${process.pid}-${Math.random().toString(16).slice(2, 10)}.json`;
    await writeFileAtomic(join(inboxOf(layout), name), stableStringify(entry));
    return 'queued';
  }
  const audit = createAuditLog({ layout, clock: deps.clock, log: deps.log });
  try {
    await audit.append(entry);
    return 'appended';
  } finally {
    await audit.close();
    await release();
  }
}

/**
 * Hand every queued CLI record to `emit`, oldest first, with its file: the server journals the record
 * and the file's deletion together, so a record is chained exactly once. Returns the count.
 */
export async function drainAuditInbox(layout: SddLayout, emit: (entry: AuditEntry, file: string) => Promise<void>, log: Logger): Promise<number> {
  const dir = inboxOf(layout);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  let n = 0;
  for (const name of names) {
    const file = join(dir, name);
    let entry: AuditEntry;
    try {
      entry = JSON.parse(await readFile(file, 'utf8')) as AuditEntry;
    } catch (err) {
      log.warn(`audit inbox: dropping unreadable ${name}: ${(err as Error).message}`);
      await rm(file, { force: true });
      continue;
    }
    await emit(entry, file);
    await rm(file, { force: true });
    n++;
  }
  return n;
}
