import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { writeJsonAtomic } from '../store/io.ts';
import type { SddLayout } from '../store/layout.ts';
import { createAuditLog, type AuditEntry, type AuditLog } from './audit.ts';

// One process at a time extends the chain: the server holds this lock for its lifetime, a CLI briefly.
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
    await mkdir(inboxOf(layout), { recursive: true });
    await writeJsonAtomic(join(inboxOf(layout), `${deps.clock.now()}-${process.pid}-${Math.random().toString(16).slice(2, 10)}.json`), entry);
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

/** Append every queued CLI record to the server's chain, oldest first, then delete it; returns the count. */
export async function drainAuditInbox(layout: SddLayout, audit: AuditLog, log: Logger): Promise<number> {
  const dir = inboxOf(layout);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  let n = 0;
  for (const name of names) {
    const file = join(dir, name);
    try {
      const entry = JSON.parse(await readFile(file, 'utf8')) as AuditEntry;
      await audit.append(entry);
      n++;
    } catch (err) {
      log.warn(`audit inbox: dropping unreadable ${name}: ${(err as Error).message}`);
    }
    await rm(file, { force: true });
  }
  return n;
}
