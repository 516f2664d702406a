import { defineCommand } from 'citty';
import { systemClock } from '../lib/clock.ts';
import { silentLogger } from '../lib/log.ts';
import { appendAuditFromCli, formatAuditBreak, verifyAudit, type AuditEntry } from '../observe/index.ts';
import type { SddLayout } from '../store/layout.ts';
import { CliError } from './args.ts';
import { command } from './command.ts';
import { localLayout } from './offline.ts';

const verify = command({ name: 'audit verify', description: 'Verify the HMAC chain of .sdd/audit; exit 1 at the first broken link' }, {}, async (c) => {
  const result = await verifyAudit(localLayout(c));
  if (c.values.json) c.out(JSON.stringify(result, null, 2));
  else {
    for (const w of result.warnings) c.out(`warning: .sdd/audit/${w.file} line ${w.line}: ${w.message}`);
    c.out(result.ok ? `audit chain ok: ${result.records} records in ${result.segments} segment(s)` : `audit chain BROKEN after ${result.records} good records`);
  }
  if (!result.ok && result.firstBroken) throw new CliError(`first broken link: ${formatAuditBreak(result.firstBroken)}`);
});

/** Append one audit record from a CLI command (queued for the server when one holds the chain). */
export async function auditOffline(layout: SddLayout, entry: AuditEntry): Promise<void> {
  await appendAuditFromCli(layout, entry, { clock: systemClock, log: silentLogger() });
}

/** `svc audit verify`. */
export const auditCommand = defineCommand({ meta: { name: 'audit', description: 'The HMAC-chained audit log' }, subCommands: { verify } });
