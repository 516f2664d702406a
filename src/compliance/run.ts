// The compliance commands' work over a tree: read, call the pure core, write. The CLI only parses and prints.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { SddLayout } from '../store/index.ts';
import { assess, svcDescriptor, type Descriptor } from './assess.ts';
import { policiesOf } from './catalogue.ts';
import type { RiskRecord } from './eu-ai-act.ts';
import type { Framework } from './policy.ts';
import { renderRego } from './rego.ts';

/** Write the marker of a framework (its policy ids) and return its path. */
export async function enableFramework(layout: SddLayout, fw: Framework): Promise<{ path: string; count: number }> {
  const ids = policiesOf([fw]).map((p) => p.id);
  const dir = join(layout.complianceDir, 'enabled');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${fw}.yaml`);
  await writeFile(path, [`# svc compliance-as-code - ${fw}`, `framework: ${fw}`, 'enabled: true', `policy_count: ${ids.length}`, 'policies:', ...ids.map((i) => `  - ${i}`), ''].join('\n'));
  return { path, count: ids.length };
}

/** Remove a framework's marker; false when it was not there. */
export async function disableFramework(layout: SddLayout, fw: Framework): Promise<boolean> {
  const path = join(layout.complianceDir, 'enabled', `${fw}.yaml`);
  const had = await readFile(path).then(() => true, () => false);
  await rm(path, { force: true });
  return had;
}

/** Every `.sdd/eu_ai_act/*.json` record (unreadable files skipped), sorted by task id. */
export async function readRiskRecords(layout: SddLayout): Promise<RiskRecord[]> {
  const names = (await readdir(layout.euAiActDir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  const out: RiskRecord[] = [];
  for (const n of names) {
    try { out.push(JSON.parse(await readFile(join(layout.euAiActDir, n), 'utf8')) as RiskRecord); } catch { /* a torn or foreign file */ }
  }
  return out;
}

/** Write one `<id>.rego` per policy under `<out>/<framework>/`; returns the folders with their counts. */
export async function writeRego(out: string, frameworks: Framework[]): Promise<{ dir: string; count: number }[]> {
  const done: { dir: string; count: number }[] = [];
  for (const fw of frameworks) {
    const dir = join(out, fw);
    await mkdir(dir, { recursive: true });
    const ps = policiesOf([fw]);
    for (const p of ps) await writeFile(join(dir, `${p.id}.rego`), renderRego(p));
    done.push({ dir, count: ps.length });
  }
  return done;
}

/** The descriptor: `.sdd/compliance/system.yaml` over svc's own. */
export async function readDescriptor(layout: SddLayout, version: string): Promise<Descriptor> {
  const base = svcDescriptor(version);
  const text = await readFile(join(layout.complianceDir, 'system.yaml'), 'utf8').catch(() => undefined);
  if (!text) return base;
  const raw = (parse(text) ?? {}) as Partial<Descriptor>;
  return {
    ...base, ...pick(raw, ['name', 'description', 'intended_use', 'deployment_context']), version,
    flags: { ...base.flags, ...(raw.flags ?? {}) }, metadata: { ...base.metadata, ...(raw.metadata ?? {}) },
  };
}

/** Assess and, unless `noExport`, write classification, conformity, tech_doc and evidence_package JSON into `out`. */
export async function runAssess(layout: SddLayout, o: { version: string; at: string; out: string; noExport: boolean }) {
  const d = await readDescriptor(layout, o.version);
  const { report, tech_doc } = assess(d, o.at);
  const pkg = { schema_version: '1.0', generated_at: o.at, regulation: 'EU AI Act (Regulation (EU) 2024/1689)', system_name: d.name, system_version: d.version, report, tech_doc };
  if (o.noExport) return { pkg, path: null };
  await mkdir(o.out, { recursive: true });
  const put = (name: string, v: unknown) => writeFile(join(o.out, name), `${JSON.stringify(v, null, 2)}\n`);
  await put('classification.json', report.classification);
  await put('conformity.json', report.conformity);
  await put('tech_doc.json', tech_doc);
  await put('evidence_package.json', pkg);
  return { pkg, path: join(o.out, 'evidence_package.json') };
}

function pick<T extends object>(o: T, keys: (keyof T)[]): Partial<T> {
  return Object.fromEntries(keys.filter((k) => typeof o[k] === 'string').map((k) => [k, o[k]])) as Partial<T>;
}
