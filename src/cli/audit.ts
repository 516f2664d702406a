import { defineCommand } from 'citty';
import { systemClock } from '../lib/clock.ts';
import { silentLogger } from '../lib/log.ts';
import {
  appendAuditFromCli, AuditKeyError, formatAuditBreak, formatRewrite, listSegments, loadAuditKey, segmentsAtTip, verifyAudit, verifyAuditHistory, type AuditEntry,
} from '../observe/index.ts';
import { createGit } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { CliError } from './args.ts';
import { command } from './command.ts';
import { localLayout } from './offline.ts';

// The key, or why there is none: a clone has no .sdd/secrets (the links can still be checked).
async function keyOrReason(layout: SddLayout): Promise<{ key: Buffer | null; reason: string | null }> {
  try {
    return { key: await loadAuditKey(layout, { create: false }), reason: null };
  } catch (err) {
    if (err instanceof AuditKeyError) return { key: null, reason: err.message };
    throw err;
  }
}

const verify = command({
  name: 'audit verify',
  description: 'Verify the audit chain (links and HMACs) and every committed record against refs/sdd/state; exit 1 at the first problem',
}, {}, async (c) => {
  const layout = localLayout(c);
  const git = createGit(layout.root);
  const { key, reason } = await keyOrReason(layout);
  // A clone that has refs/sdd/state but never started svc: check the segments the ref holds.
  const onDisk = (await listSegments(layout.auditDir)).length > 0;
  const fromRef = onDisk ? [] : await segmentsAtTip(git);
  const source = onDisk || fromRef.length === 0 ? 'working files' : 'refs/sdd/state';
  const chain = await verifyAudit(layout, { key, ...(source === 'refs/sdd/state' ? { segments: fromRef } : {}) });
  const history = await verifyAuditHistory({ git, layout }, { workingFiles: source === 'working files' });
  const unchecked = chain.records > 0 && !chain.hmacChecked;
  if (c.values.json) c.out(JSON.stringify({ ...chain, source, history, ...(unchecked ? { hmac_unchecked: reason } : {}) }, null, 2));
  else {
    for (const w of chain.warnings) c.out(`warning: .sdd/audit/${w.file} line ${w.line}: ${w.message}`);
    const what = chain.hmacChecked ? 'links and HMACs' : 'links only';
    c.out(chain.ok ? `audit chain ok (${what}): ${chain.records} records in ${chain.segments} segment(s) of the ${source}` : `audit chain BROKEN after ${chain.records} good records`);
    if (history.checked) c.out(history.firstRewritten ? 'audit history: a committed record was rewritten' : `audit history ok: ${history.versions} committed version(s) of ${history.segments} segment(s) in refs/sdd/state`);
    else c.out('audit history not checked: no refs/sdd/state in this repository');
  }
  if (!chain.ok && chain.firstBroken) throw new CliError(`first broken link: ${formatAuditBreak(chain.firstBroken)}`);
  if (history.firstRewritten) throw new CliError(`rewritten record: ${formatRewrite(history.firstRewritten)}`);
  if (unchecked) {
    throw new CliError(`HMACs not checked: ${reason}. The hash links (seq, prev) of ${chain.records} record(s) were checked; each record's HMAC needs .sdd/secrets/audit.key, which a clone does not have (copy it from the server's .sdd/secrets to check them)`);
  }
});

/** Append one audit record from a CLI command (queued for the server when one holds the chain). */
export async function auditOffline(layout: SddLayout, entry: AuditEntry): Promise<void> {
  await appendAuditFromCli(layout, entry, { clock: systemClock, log: silentLogger() });
}

/** `svc audit verify`. */
export const auditCommand = defineCommand({ meta: { name: 'audit', description: 'The HMAC-chained audit log' }, subCommands: { verify } });
