import { isAbsolute, relative, resolve } from 'node:path';
import type { ArgsDef } from 'citty';
// The compliance modules a check runs, not compliance/index.ts (exports, inventories, assess): see check.ts.
import { isFramework } from '../compliance/catalogue.ts';
import { runCheck } from '../compliance/check.ts';
import { FAIL_ON, type FailOn } from '../compliance/evaluate.ts';
import { INPUTS, flagOf, type InputName, type InputValue } from '../compliance/inputs.ts';
import { FRAMEWORKS, type Framework } from '../compliance/policy.ts';
import { renderCheck } from '../compliance/render.ts';
import { sddLayout, type SddLayout } from '../store/layout.ts';
import { CliError, UsageError, intArg } from './args.ts';
import { command, type RunContext } from './command.ts';
import { checkWorkTree } from './workspace.ts';

/** `--json-output` (INTERFACE) and `--json` both print JSON. */
export const JSON_OUTPUT: ArgsDef = { 'json-output': { type: 'boolean', description: 'Print JSON for programs' } };
export const wantsJson = (c: RunContext) => c.values.json === true || c.values['json-output'] === true;
export const printJson = (c: RunContext, v: unknown) => c.out(JSON.stringify(v, null, 2));

/** The `.sdd` layout of --workdir without creating anything (compliance commands read the tree as it is). */
export function treeLayout(c: RunContext): SddLayout {
  return sddLayout(checkWorkTree(resolve(String(c.values.workdir ?? process.cwd()))).root);
}

/** A path for people: relative to the work tree when inside it. */
export function shown(layout: SddLayout, abs: string): string {
  const rel = relative(layout.root, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

/** `--framework`, checked (case-insensitive). */
export function frameworkArg(v: unknown): Framework | undefined {
  if (v === undefined) return undefined;
  const name = String(v).toLowerCase();
  if (!isFramework(name)) throw new UsageError(`--framework must be one of ${FRAMEWORKS.join(', ')} (got '${String(v)}')`);
  return name;
}

/** `--as-of YYYY-MM-DD` (default: today, UTC): the day ages are measured to, so one tree gives one answer per day. */
export function asOfArg(v: unknown): number {
  const text = v === undefined ? new Date().toISOString().slice(0, 10) : String(v);
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--as-of expects a date YYYY-MM-DD, got '${text}'`);
  return ms;
}

// One flag per input, from the inputs table: booleans pair with --no-…, numbers take a value.
const INPUT_FLAGS: ArgsDef = Object.fromEntries(INPUTS.map((d) => [flagOf(d.name), d.kind === 'bool'
  ? { type: 'boolean', description: `Assert ${d.name} (${d.description}); --no-${flagOf(d.name)} asserts false` }
  : { type: 'string', description: `Assert ${d.name} (${d.description})${d.flagDefault === undefined ? '' : `; default ${String(d.flagDefault)} when not observed`}` }]));

function assertedFlags(c: RunContext): Partial<Record<InputName, InputValue>> {
  const out: Partial<Record<InputName, InputValue>> = {};
  for (const d of INPUTS) {
    const v = c.values[flagOf(d.name)];
    if (v === undefined) continue;
    out[d.name] = d.kind === 'bool' ? v === true : intArg(flagOf(d.name), v, 0, 1_000_000)!;
  }
  return out;
}

/** `svc compliance check`: exit 1 when a failing policy reaches --fail-on (default critical). */
export const checkCommand = command({ name: 'compliance check', description: 'Evaluate policies against what the .sdd tree shows; flags assert inputs' }, {
  framework: { type: 'string', description: `One of ${FRAMEWORKS.join(', ')} (default: the enabled frameworks, else all)` },
  'fail-on': { type: 'string', description: 'Exit 1 when a failing policy has this severity or higher (default critical; none never fails)' },
  'as-of': { type: 'string', description: 'Day ages are measured to, YYYY-MM-DD (default: today, UTC)' },
  ...JSON_OUTPUT,
  ...INPUT_FLAGS,
}, async (c) => {
  const failOn = String(c.values['fail-on'] ?? 'critical').toLowerCase() as FailOn;
  if (!FAIL_ON.includes(failOn)) throw new UsageError(`--fail-on must be one of ${FAIL_ON.join(', ')} (got '${failOn}')`);
  const out = await runCheck(treeLayout(c), { framework: frameworkArg(c.values.framework), flags: assertedFlags(c), failOn, asOf: asOfArg(c.values['as-of']) });
  if (wantsJson(c)) printJson(c, out);
  else c.out(renderCheck({ frameworks: out.frameworks, asOf: out.as_of, results: out.results, summary: out.summary, hipaa: out.hipaa_warnings }));
  if (out.failed_threshold) throw new CliError(`policies failed at or above --fail-on ${failOn}`);
});
