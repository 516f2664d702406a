// `svc cluster claims log|head|verify`: the claim journal of this repository, offline.
import { readFile } from 'node:fs/promises';
import { defineCommand } from 'citty';
// The pure files, not the domain's index: reading a journal should not load the server side of the cluster.
import { GENESIS, verifyJournal, type JournalLine } from '../cluster/receipts.ts';
import { clusterFiles, loadedEntries } from '../cluster/view.ts';
import { readJsonl } from '../store/jsonl.ts';
import type { SddLayout } from '../store/layout.ts';
import { CliError } from './args.ts';
import { command } from './command.ts';
import { localLayout } from './offline.ts';
import { table } from './table.ts';

const short = (h: unknown) => (typeof h === 'string' ? `${h.slice(0, 19)}…` : '');

async function journalOf(layout: SddLayout): Promise<JournalLine[]> {
  return readJsonl<JournalLine>(clusterFiles(layout).journal);
}

// Registered keys come from the committed registry, so a clone verifies signatures too.
async function keysOf(layout: SddLayout): Promise<(id: string) => string | null> {
  const text = await readFile(clusterFiles(layout).nodes, 'utf8').catch(() => undefined);
  let file: unknown;
  try { file = text ? JSON.parse(text) : undefined; } catch { file = undefined; }
  const keys = new Map(loadedEntries(file).map((e) => [e.id, e.publicKey]));
  return (id) => keys.get(id) ?? null;
}

const log = command({ name: 'cluster claims log', description: 'The claim journal, oldest first' }, {}, async (c) => {
  const lines = await journalOf(localLayout(c));
  if (c.values.json) return c.out(JSON.stringify(lines, null, 2));
  if (!lines.length) return c.out('No claim receipts.');
  c.out(table(lines.map((l, i) => ({
    '#': i + 1, kind: l.kind, node: l.node_id ?? l.fork_node_id ?? '', task: l.task_id ?? l.ticket_id ?? '', ts: l.ts ?? '', entry: short(l.entry_hash), prev: short(l.prev_entry_hash),
  })), ['#', 'kind', 'node', 'task', 'ts', 'entry', 'prev']));
});

const head = command({ name: 'cluster claims head', description: 'The journal\'s head: the entry_hash the next receipt must link to' }, {}, async (c) => {
  const lines = await journalOf(localLayout(c));
  const value = lines.length ? lines[lines.length - 1]!.entry_hash : GENESIS;
  c.out(c.values.json ? JSON.stringify({ head: value, entries: lines.length }) : value);
});

const verify = command({ name: 'cluster claims verify', description: 'Walk the journal: hashes, links, signatures. Exit 0 intact, 1 broken, 2 forked' }, {}, async (c) => {
  const layout = localLayout(c);
  const v = verifyJournal(await journalOf(layout), await keysOf(layout));
  if (c.values.json) c.out(JSON.stringify(v, null, 2));
  const unverified = v.unverified ? `; ${v.unverified} signature(s) not checked: their node is no longer registered` : '';
  if (v.state === 'broken') throw new CliError(`broken at entry ${v.broken!.index + 1} of ${v.entries}: ${v.broken!.reason}`, 1);
  if (v.state === 'forked') throw new CliError(`forked: ${v.forks} fork record(s), the first at entry ${v.firstFork! + 1}; the chain of ${v.entries} entries is intact${unverified}`, 2);
  if (!c.values.json) c.out(`intact: ${v.entries} entries, head ${v.head}${unverified}`);
});

/** `svc cluster claims …`. */
export const claimsCommand = defineCommand({
  meta: { name: 'claims', description: 'The claim journal (.sdd/cluster/claim_journal.jsonl): log, head, verify' },
  subCommands: { log, head, verify },
});
