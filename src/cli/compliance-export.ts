import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EXPORT_FORMATS, collectEvidence, renderExport, type ExportFormat } from '../compliance/index.ts';
import { UsageError } from './args.ts';
import { command } from './command.ts';
import { shown, treeLayout } from './compliance-check.ts';
import { VERSION } from './version.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** `svc compliance export --format sarif|oscal|csv --since D --until D [--output FILE]`. */
export const exportCommand = command({ name: 'compliance export', description: 'Evidence of a window from the board: task → session branch → gate report → merge commit, with the audit chain' }, {
  format: { type: 'string', description: 'sarif | oscal | csv' },
  since: { type: 'string', description: 'First day, YYYY-MM-DD (UTC)' },
  until: { type: 'string', description: 'Last day, YYYY-MM-DD (UTC, inclusive)' },
  output: { type: 'string', description: 'Write here instead of standard output' },
}, async (c) => {
  const format = c.values.format as ExportFormat | undefined;
  if (!format || !EXPORT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
  const since = String(c.values.since ?? '');
  const until = String(c.values.until ?? '');
  if (!DAY.test(since) || Number.isNaN(Date.parse(since))) throw new UsageError(`--since expects YYYY-MM-DD, got '${since}'`);
  if (!DAY.test(until) || Number.isNaN(Date.parse(until))) throw new UsageError(`--until expects YYYY-MM-DD, got '${until}'`);
  if (since > until) throw new UsageError(`--since ${since} is after --until ${until}`);
  const layout = treeLayout(c);
  const data = await collectEvidence(layout, Date.parse(`${since}T00:00:00.000Z`), Date.parse(`${until}T23:59:59.999Z`));
  const text = renderExport(format, { ...data, since, until, toolVersion: VERSION });
  if (!c.values.output) return void process.stdout.write(text);
  const path = resolve(String(c.values.output));
  await writeFile(path, text);
  process.stderr.write(`wrote ${data.rows.length} task(s) as ${format} to ${shown(layout, path)}\n`);
});
