// `svc cluster govern-inventory`: which workloads of a cluster listing are governed (offline).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GOVERN_LABEL, InventoryError, inventory, inventoryHash, listingItems, previousWorkloads, renderInventory, transitions } from '../compliance/index.ts';
import { CliError, UsageError } from './args.ts';
import { command } from './command.ts';

// JSON is YAML, so one parser reads `kubectl get … -o json` output and multi-document manifests alike.
async function readDocs(path: string, flag: string): Promise<unknown[]> {
  const text = await readFile(resolve(path), 'utf8').catch(() => { throw new UsageError(`--${flag}: cannot read ${path}`); });
  const docs = parseAllDocuments(text);
  const bad = docs.find((d) => d.errors.length);
  if (bad) throw new CliError(`${path}: not JSON or YAML: ${bad.errors[0]!.message.split('\n')[0]}`);
  return docs.map((d) => d.toJS());
}

export const governInventoryCommand = command({ name: 'cluster govern-inventory', description: 'Which workloads of a cluster listing are governed (label svc/govern), what changed, and a hash of it' }, {
  manifests: { type: 'string', description: 'kubectl get … -o json output, a JSON array, or YAML manifests' },
  previous: { type: 'string', description: 'An earlier --json output to diff against' },
  'label-key': { type: 'string', description: `Label key (default ${GOVERN_LABEL})` },
}, async (c) => {
  if (!c.values.manifests) throw new UsageError('--manifests FILE is required');
  const labelKey = String(c.values['label-key'] ?? GOVERN_LABEL);
  try {
    const workloads = inventory(listingItems(await readDocs(String(c.values.manifests), 'manifests')), labelKey);
    const before = c.values.previous ? previousWorkloads((await readDocs(String(c.values.previous), 'previous'))[0]) : [];
    const hash = inventoryHash(workloads);
    const changes = transitions(before, workloads);
    if (c.values.json) c.out(JSON.stringify({ label_key: labelKey, workloads, inventory_hash: hash, transitions: changes }, null, 2));
    else c.out(renderInventory(labelKey, workloads, hash, changes));
  } catch (err) {
    if (err instanceof InventoryError) throw new CliError(err.message);
    throw err;
  }
});
