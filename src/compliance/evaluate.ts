// The evaluator (pure): a snapshot of inputs, each observed or asserted, against policies.
import { inputsOf } from './catalogue.ts';
import type { InputName, InputValue } from './inputs.ts';
import { SEVERITIES, type Condition, type Policy, type Severity } from './policy.ts';

/** How an input's value is known: observed from the tree (with references) or asserted by the operator. */
export type Evidence =
  | { status: 'observed'; refs: string[]; note: string }
  | { status: 'asserted'; source: 'flag' | 'default' };

/** Every input's value and how it is known. */
export interface Snapshot {
  values: Record<InputName, InputValue>;
  evidence: Record<InputName, Evidence>;
}

export type EvidenceStatus = 'evidenced' | 'operator_asserted';

export interface PolicyResult {
  policy_id: string;
  name: string;
  framework: string;
  control_id: string;
  severity: Severity;
  passed: boolean;
  finding: string;
  remediation: string;
  evidence_status: EvidenceStatus;
  asserted_inputs: InputName[];
  evidence_refs: string[];
  control_statement: string;
  inputs: Record<string, InputValue>;
}

export const FAIL_ON = ['critical', 'high', 'medium', 'low', 'none'] as const;
export type FailOn = (typeof FAIL_ON)[number];
const RANK: Record<Severity, number> = { critical: 4, high: 3, medium: 2, low: 1, informational: 0 };

/** True when the condition holds for the value. */
export function holds(c: Condition, v: InputValue): boolean {
  if (c.op === '==') return v === c.value;
  if (typeof v !== 'number') return false;
  return c.op === '<=' ? v <= (c.value as number) : v >= (c.value as number);
}

/** Evaluate one policy against a snapshot. */
export function evaluatePolicy(p: Policy, s: Snapshot): PolicyResult {
  const names = inputsOf(p);
  const passed = p.when.every((c) => holds(c, s.values[c.input]));
  const asserted = names.filter((n) => s.evidence[n].status === 'asserted');
  const refs = [...new Set(names.flatMap((n) => { const e = s.evidence[n]; return e.status === 'observed' ? e.refs : []; }))].sort();
  const shown = (list: InputName[]) => list.map((n) => `${n}=${String(s.values[n])}`).join(', ');
  const observed = names.filter((n) => !asserted.includes(n));
  const statement = asserted.length
    ? `The operator declares ${shown(asserted)}${observed.length ? `; observed from the tree: ${shown(observed)}` : ''}. ${p.description}`
    : `Observed from the tree: ${shown(names)}. ${p.description}`;
  return {
    policy_id: p.id, name: p.name, framework: p.framework, control_id: p.control_id, severity: p.severity, passed,
    finding: passed ? '' : `Policy ${p.id} (${p.control_id}) FAILED: ${p.description}`,
    remediation: passed ? '' : p.remediation,
    evidence_status: asserted.length ? 'operator_asserted' : 'evidenced',
    asserted_inputs: asserted, evidence_refs: refs, control_statement: statement,
    inputs: Object.fromEntries(names.map((n) => [n, s.values[n]])),
  };
}

/** Evaluate policies in the order given. */
export function evaluate(policies: readonly Policy[], s: Snapshot): PolicyResult[] {
  return policies.map((p) => evaluatePolicy(p, s));
}

/** Counts for the summary: passing/failing and, separately, evidenced/asserted. */
export function summarise(results: PolicyResult[]) {
  const evidenced = results.filter((r) => r.evidence_status === 'evidenced');
  const passing = results.filter((r) => r.passed);
  return {
    total: results.length,
    passing: passing.length,
    failing: results.length - passing.length,
    evidence: {
      evidenced: evidenced.length,
      operator_asserted: results.length - evidenced.length,
      passing_evidenced: passing.filter((r) => r.evidence_status === 'evidenced').length,
      passing_asserted: passing.filter((r) => r.evidence_status === 'operator_asserted').length,
      evidenced_ratio: results.length ? Math.round((evidenced.length / results.length) * 1000) / 1000 : 0,
      operator_asserted_policy_ids: results.filter((r) => r.evidence_status === 'operator_asserted').map((r) => r.policy_id),
    },
  };
}

/** True when a failing policy's severity reaches the threshold (`none` never fails). */
export function breaches(results: PolicyResult[], failOn: FailOn): boolean {
  if (failOn === 'none') return false;
  return results.some((r) => !r.passed && RANK[r.severity] >= RANK[failOn]);
}

/** Failing results, most severe first (catalogue order within a severity). */
export function failuresBySeverity(results: PolicyResult[]): PolicyResult[] {
  return results.filter((r) => !r.passed).sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
}
