// `svc compliance check` over a tree: gather the facts, observe the inputs, evaluate. Apart from the rest of
// the domain so that a check loads only the modules it runs (a new process per check: bench/README.md).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SddLayout } from '../store/layout.ts';
import { isFramework, policiesOf } from './catalogue.ts';
import { breaches, evaluate, summarise, type FailOn } from './evaluate.ts';
import { hipaaWarnings, observe, snapshot } from './evidence.ts';
import { gatherFacts } from './gather.ts';
import type { InputName, InputValue } from './inputs.ts';
import { FRAMEWORKS, type Framework } from './policy.ts';

/** Frameworks switched on by marker files under `.sdd/compliance/enabled/`, sorted. */
export async function enabledFrameworks(layout: SddLayout): Promise<Framework[]> {
  const names = await readdir(join(layout.complianceDir, 'enabled')).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.yaml')).map((n) => n.slice(0, -5)).filter(isFramework).sort();
}

/** Evaluate the given framework, else the enabled ones, else all four, against what the tree shows and the flags. */
export async function runCheck(layout: SddLayout, o: { framework?: Framework; flags: Partial<Record<InputName, InputValue>>; failOn: FailOn; asOf: number }) {
  const enabled = o.framework ? [o.framework] : await enabledFrameworks(layout);
  const frameworks = enabled.length ? enabled : [...FRAMEWORKS];
  const facts = await gatherFacts(layout, o.asOf);
  const snap = snapshot(observe(facts, o.asOf), o.flags);
  const results = evaluate(policiesOf(frameworks), snap);
  return {
    frameworks, as_of: new Date(o.asOf).toISOString().slice(0, 10), mode: facts.config.hipaa ? 'hipaa' : 'standard',
    hipaa_warnings: facts.config.hipaa ? hipaaWarnings(snap) : null,
    fail_on: o.failOn, failed_threshold: breaches(results, o.failOn), summary: summarise(results), results,
  };
}
