// The shape of a policy and of its conditions: data, read by one evaluator and one Rego renderer.
import { INPUT_NAMES, type InputName } from './inputs.ts';

export const FRAMEWORKS = ['iso27001', 'nist_800_53', 'pci_dss', 'soc2'] as const;
export type Framework = (typeof FRAMEWORKS)[number];
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'informational'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** `input == true`, `input <= n` or `input >= n`. */
export interface Condition {
  input: InputName;
  op: '==' | '<=' | '>=';
  value: boolean | number;
}

export interface Policy {
  id: string;
  framework: Framework;
  control_id: string;
  severity: Severity;
  name: string;
  description: string;
  remediation: string;
  when: Condition[];
}

/** A policy as written in the catalogue files: conditions as `name` or `name<=90` strings. */
export type PolicyRow = [id: string, control: string, severity: Severity, name: string, description: string, remediation: string, when: string[]];

/** Parse catalogue rows of one framework; a bad condition is a programming error, caught by the catalogue test. */
export function policies(framework: Framework, rows: PolicyRow[]): Policy[] {
  return rows.map(([id, control_id, severity, name, description, remediation, when]) => ({
    id, framework, control_id, severity, name, description, remediation, when: when.map(condition),
  }));
}

function condition(text: string): Condition {
  const m = /^([a-z_0-9]+)(?:(<=|>=)(\d+))?$/.exec(text);
  if (!m || !(INPUT_NAMES as readonly string[]).includes(m[1]!)) throw new Error(`bad policy condition: ${text}`);
  return m[2] ? { input: m[1] as InputName, op: m[2] as '<=' | '>=', value: Number(m[3]) } : { input: m[1] as InputName, op: '==', value: true };
}
