// Text for people (pure): the same data the JSON output carries, laid out for a terminal.
import { inputsOf } from './catalogue.ts';
import { failuresBySeverity, type PolicyResult, type summarise } from './evaluate.ts';
import type { RiskLevel, summariseRisk } from './eu-ai-act.ts';
import type { Policy } from './policy.ts';

const RULE = '─';

/** `list`: ID, Framework, Control, Sev, Name columns, then the total. */
export function renderList(policies: readonly Policy[]): string {
  const row = (a: string, b: string, c: string, d: string, e: string) => `${a.padEnd(22)}${b.padEnd(12)}${c.padEnd(14)}${d.padEnd(12)}${e}`;
  return [row('ID', 'Framework', 'Control', 'Sev', 'Name'), RULE.repeat(90), ...policies.map((p) => row(p.id, p.framework, p.control_id, p.severity, p.name)), '', `Total: ${policies.length} policies`].join('\n');
}

/** JSON rows of `list`. */
export function listRows(policies: readonly Policy[]) {
  return policies.map((p) => ({ policy_id: p.id, name: p.name, framework: p.framework, control_id: p.control_id, severity: p.severity, description: p.description, inputs: inputsOf(p) }));
}

/** `check`: counts, evidence counts, HIPAA warnings, then failures by severity with their remediation. */
export function renderCheck(o: { frameworks: string[]; asOf: string; results: PolicyResult[]; summary: ReturnType<typeof summarise>; hipaa: string[] | null }): string {
  const { summary: s } = o;
  const lines = [
    `Compliance check: ${s.total} policies evaluated (${o.frameworks.join(', ')}; as of ${o.asOf})`,
    `  Passing: ${s.passing}   Failing: ${s.failing}`,
    `  Evidenced: ${s.evidence.evidenced}   Operator-asserted: ${s.evidence.operator_asserted}   (passing and evidenced: ${s.evidence.passing_evidenced})`,
  ];
  if (o.hipaa) lines.push(`  HIPAA mode: ${o.hipaa.length ? o.hipaa.join('; ') : 'prerequisites met'}`);
  const failures = failuresBySeverity(o.results);
  if (!failures.length) return [...lines, '', 'All policies passed.'].join('\n');
  lines.push('', 'FAILURES:');
  for (const r of failures) {
    lines.push(`  [${r.severity.toUpperCase().padEnd(12)}] ${r.policy_id.padEnd(22)} ${r.name}${r.evidence_status === 'operator_asserted' ? '  (operator-asserted)' : ''}`);
    lines.push(`      ${r.remediation}`);
  }
  return lines.join('\n');
}

/** `eu-ai-act`: counts per level and the latest high-risk tasks. */
export function renderRisk(s: ReturnType<typeof summariseRisk>): string {
  const levels: RiskLevel[] = ['minimal', 'limited', 'high', 'unacceptable'];
  const lines = ['EU AI Act Task Risk Summary', `  Total assessments: ${s.total}`, ...levels.map((l) => `  ${l.padStart(12)}: ${s.counts[l]}`)];
  if (!s.latest_high_risk.length) return [...lines, '  No high-risk or unacceptable tasks recorded.'].join('\n');
  lines.push('', 'Latest high-risk tasks:');
  for (const r of s.latest_high_risk) lines.push(`  - ${r.task_id} [${r.risk_level}] ${r.title}${r.approval_required ? ' (approval required)' : ''}`);
  return lines.join('\n');
}

type Report = { classification?: Record<string, any>; conformity?: Record<string, any>; compliance_summary?: Record<string, any> };
/** `report` and `assess`: the classification, conformity and next steps between two rules. */
export function renderReport(r: Report): string {
  const c = r.classification ?? {};
  const k = r.conformity ?? {};
  const s = r.compliance_summary ?? {};
  const lines = [
    RULE.repeat(60),
    `  EU AI Act Compliance Assessment: ${c.system_name ?? 'unknown'} ${c.system_version ?? ''}`.trimEnd(),
    RULE.repeat(60),
    `  Risk Category    : ${String(c.risk_category ?? 'unknown').toUpperCase()}`,
    `  Annex III Domain : ${c.annex_iii_domain ?? 'not_applicable'}`,
    `  Conformity Status: ${k.overall_status ?? 'unknown'}  (pass=${k.passed ?? 0}, fail=${k.failed ?? 0}, partial=${k.partial ?? 0})`,
  ];
  if (c.justification) lines.push(`  Justification    : ${c.justification}`);
  if (Array.isArray(k.mandatory_gaps) && k.mandatory_gaps.length) lines.push('  Mandatory Gaps:', ...k.mandatory_gaps.map((g: string) => `    - ${g}`));
  if (Array.isArray(s.next_steps) && s.next_steps.length) lines.push('  Next Steps:', ...s.next_steps.map((g: string) => `    • ${g}`));
  lines.push(`  Deadline: ${s.deadline ?? 'N/A'}`, RULE.repeat(60));
  return lines.join('\n');
}
