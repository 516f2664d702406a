// Rego v1 text of a policy (pure): one package per policy, `allow` true only when every condition holds.
import type { Policy } from './policy.ts';

/** `svc.<framework>.<id without its first part>`: `nist-ac-02` → `svc.nist_800_53.ac_02`. */
export function regoPackage(p: Policy): string {
  return `svc.${p.framework}.${p.id.split('-').slice(1).join('_')}`;
}

/** The module text: METADATA annotations (YAML, strings JSON-quoted), `default allow := false`, one `allow if` body. */
export function renderRego(p: Policy): string {
  const q = (s: string) => JSON.stringify(s);
  const body = p.when.map((c) => `\tinput.${c.input} ${c.op} ${String(c.value)}`);
  return [
    '# METADATA',
    `# title: ${q(p.name)}`,
    `# description: ${q(p.description)}`,
    '# custom:',
    `#   policy_id: ${q(p.id)}`,
    `#   framework: ${q(p.framework)}`,
    `#   control_id: ${q(p.control_id)}`,
    `#   severity: ${q(p.severity)}`,
    `#   remediation: ${q(p.remediation)}`,
    `package ${regoPackage(p)}`,
    '',
    'default allow := false',
    '',
    'allow if {',
    ...body,
    '}',
    '',
  ].join('\n');
}
