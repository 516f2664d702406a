// `svc compliance eu-ai-act | assess | report | enable | disable | list | rego` (check and export have their own files).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  CATALOGUE, FRAMEWORKS, disableFramework, enableFramework, listRows, policiesOf, readRiskRecords, renderList, renderReport,
  renderRisk, runAssess, summariseRisk, writeRego, type Framework,
} from '../compliance/index.ts';
import { CliError, UsageError } from './args.ts';
import { command, type RunContext } from './command.ts';
import { JSON_OUTPUT, asOfArg, frameworkArg, printJson, shown, treeLayout, wantsJson } from './compliance-check.ts';

const FRAMEWORK_ARG = { framework: { type: 'positional', description: FRAMEWORKS.join(' | ') } } as const;
const positionalFramework = (c: RunContext): Framework => {
  const fw = frameworkArg(c.positionals[0]);
  if (!fw) throw new UsageError('missing argument: framework');
  return fw;
};

/** `svc compliance eu-ai-act`: the risk levels of the EU AI Act records. */
export const euAiAct = command({ name: 'compliance eu-ai-act', description: 'Counts of EU AI Act risk levels over .sdd/eu_ai_act/*.json and the latest high-risk tasks' }, { ...JSON_OUTPUT }, async (c) => {
  const s = summariseRisk(await readRiskRecords(treeLayout(c)));
  if (wantsJson(c)) printJson(c, s);
  else c.out(renderRisk(s));
});

/** `svc compliance assess`: classification, technical document and evidence package. */
export const assess = command({ name: 'compliance assess', description: 'Classify svc under the EU AI Act, write the technical document and the evidence package' }, {
  'output-dir': { type: 'string', description: 'Where to write the package (default .sdd/compliance)' },
  version: { type: 'string', description: 'System version (default 1.0.0)' },
  'no-export': { type: 'boolean', description: 'Print only; write nothing' },
  'as-of': { type: 'string', description: 'Assessment date YYYY-MM-DD (default: today, UTC)' },
  ...JSON_OUTPUT,
}, async (c) => {
  const layout = treeLayout(c);
  const out = c.values['output-dir'] ? resolve(String(c.values['output-dir'])) : layout.complianceDir;
  const at = new Date(asOfArg(c.values['as-of'])).toISOString();
  const { pkg, path } = await runAssess(layout, { version: String(c.values.version ?? '1.0.0'), at, out, noExport: c.values['no-export'] === true });
  if (wantsJson(c)) return printJson(c, pkg);
  c.out(renderReport(pkg.report));
  if (path) c.out(`\nEvidence package written to: ${shown(layout, path)}`);
});

/** `svc compliance report`: an evidence package rendered again. */
export const report = command({ name: 'compliance report', description: 'Re-render an evidence package written by assess' }, {
  'evidence-package': { type: 'string', description: 'Path of the package (default .sdd/compliance/evidence_package.json)' },
  ...JSON_OUTPUT,
}, async (c) => {
  const layout = treeLayout(c);
  const given = c.values['evidence-package'];
  const path = given ? resolve(String(given)) : join(layout.complianceDir, 'evidence_package.json');
  if (!existsSync(path)) {
    if (given) throw new UsageError(`--evidence-package: no such file: ${String(given)}`);
    throw new CliError(`Evidence package not found: ${shown(layout, path)}\nRun \`svc compliance assess\` first.`);
  }
  let pkg: Record<string, any>;
  try { pkg = JSON.parse(await readFile(path, 'utf8')); } catch { throw new CliError(`${shown(layout, path)} is not JSON`); }
  const body = pkg.report ?? pkg;
  if (wantsJson(c)) printJson(c, body);
  else c.out(renderReport(body));
});

/** `svc compliance enable FRAMEWORK`: its marker file. */
export const enable = command({ name: 'compliance enable', description: 'Enable a framework for check (writes .sdd/compliance/enabled/<framework>.yaml)' }, { ...FRAMEWORK_ARG }, async (c) => {
  const fw = positionalFramework(c);
  const layout = treeLayout(c);
  const { path, count } = await enableFramework(layout, fw);
  c.out(`Enabled ${fw} compliance framework (${count} policies).\nMarker written to: ${shown(layout, path)}\nRun 'svc compliance check' to evaluate the enabled frameworks.`);
});

/** `svc compliance disable FRAMEWORK`: its marker removed. */
export const disable = command({ name: 'compliance disable', description: 'Disable a framework (removes its marker)' }, { ...FRAMEWORK_ARG }, async (c) => {
  const fw = positionalFramework(c);
  const had = await disableFramework(treeLayout(c), fw);
  c.out(had ? `Disabled ${fw} compliance framework.` : `${fw} was not enabled.`);
});

/** `svc compliance list`: the catalogue. */
export const list = command({ name: 'compliance list', description: 'Policy id, framework, control id, severity and name of every policy' }, {
  framework: { type: 'string', description: FRAMEWORKS.join(' | ') }, ...JSON_OUTPUT,
}, (c) => {
  const fw = frameworkArg(c.values.framework);
  const ps = fw ? policiesOf([fw]) : CATALOGUE;
  if (wantsJson(c)) printJson(c, listRows(ps));
  else c.out(renderList(ps));
});

/** `svc compliance rego`: one Rego v1 file per policy. */
export const rego = command({ name: 'compliance rego', description: 'Write one Rego v1 file per policy under .sdd/compliance/rego/<framework>/' }, {
  framework: { type: 'string', description: `${FRAMEWORKS.join(' | ')} (default: all)` },
  'output-dir': { type: 'string', description: 'Root folder (default .sdd/compliance/rego)' },
  ...JSON_OUTPUT,
}, async (c) => {
  const layout = treeLayout(c);
  const fw = frameworkArg(c.values.framework);
  const out = c.values['output-dir'] ? resolve(String(c.values['output-dir'])) : join(layout.complianceDir, 'rego');
  const done = await writeRego(out, fw ? [fw] : [...FRAMEWORKS]);
  if (wantsJson(c)) return printJson(c, done.map((d) => ({ dir: shown(layout, d.dir), count: d.count })));
  for (const d of done) c.out(`Exported ${d.count} Rego policies to: ${shown(layout, d.dir)}`);
});
