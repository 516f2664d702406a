// The inputs a policy reads: one table gives each its type, its least-secure value and its CLI flag.

/** Every input name a policy may read. */
export const INPUT_NAMES = [
  'audit_logging', 'audit_hmac_chain', 'audit_retention_days', 'log_integrity',
  'rbac_enabled', 'mfa_enabled', 'tls_enforced', 'encrypt_in_transit', 'encrypt_at_rest',
  'secrets_rotation_days', 'session_timeout_minutes', 'agent_token_expiry_hours', 'password_min_length', 'access_review_days',
  'sandbox_enabled', 'seccomp_enabled', 'network_isolation', 'least_privilege_caps',
  'vulnerability_scanning', 'sast_in_ci', 'sbom_enabled', 'dependency_pinning', 'change_approval_gates',
  'incident_response_plan', 'data_classification', 'backup_enabled', 'backup_encryption', 'dr_rto_hours',
  'waf_enabled', 'phi_detection',
] as const;
export type InputName = (typeof INPUT_NAMES)[number];
export type InputValue = boolean | number;

/** One input: `worst` is its value when nothing is known (least secure); `flag` asserts it on the command line. */
export interface InputDef {
  name: InputName;
  kind: 'bool' | 'days' | 'number';
  worst: InputValue;
  /** A value every policy reading it accepts (docs and tests). */
  secure: InputValue;
  /** Default of the flag when the input is neither observed nor given (INTERFACE: --secrets-rotation-days 30). */
  flagDefault?: InputValue;
  description: string;
}

const b = (name: InputName, description: string): InputDef => ({ name, kind: 'bool', worst: false, secure: true, description });
const n = (name: InputName, worst: number, secure: number, description: string, flagDefault?: number): InputDef =>
  ({ name, kind: 'number', worst, secure, description, ...(flagDefault === undefined ? {} : { flagDefault }) });

/** The inputs in documentation order. */
export const INPUTS: readonly InputDef[] = [
  b('audit_logging', 'security events are written to an audit log'),
  b('audit_hmac_chain', 'the audit log is an HMAC chain that verifies'),
  n('audit_retention_days', 0, 400, 'days of audit history retained'),
  b('log_integrity', 'audit records are protected against tampering and kept in history'),
  b('rbac_enabled', 'authentication is on and access goes through role-bearing tokens'),
  b('mfa_enabled', 'people sign in with multi-factor authentication'),
  b('tls_enforced', 'clients reach the server over TLS'),
  b('encrypt_in_transit', 'data in transit is encrypted'),
  b('encrypt_at_rest', 'stored data is encrypted at rest'),
  n('secrets_rotation_days', 999, 30, 'age in days of the oldest live credential (tokens, cluster secret)', 30),
  n('session_timeout_minutes', 9999, 30, 'minutes before an idle session expires'),
  n('agent_token_expiry_hours', 9999, 12, 'hours an agent token stays valid'),
  n('password_min_length', 0, 16, 'minimum length of a credential'),
  n('access_review_days', 999, 30, 'days between access reviews'),
  b('sandbox_enabled', 'agents and gates run in a sandbox'),
  b('seccomp_enabled', 'the sandbox filters system calls'),
  b('network_isolation', 'agents have no network beyond what they need'),
  b('least_privilege_caps', 'processes run with the fewest privileges they need'),
  b('vulnerability_scanning', 'dependencies and images are scanned for vulnerabilities'),
  b('sast_in_ci', 'static analysis runs in CI'),
  b('sbom_enabled', 'a software bill of materials is kept'),
  b('dependency_pinning', 'dependencies are pinned by a lock file'),
  b('change_approval_gates', 'changes pass configured quality gates before they merge'),
  b('incident_response_plan', 'an incident response plan exists'),
  b('data_classification', 'data is classified'),
  b('backup_enabled', 'state is backed up'),
  b('backup_encryption', 'backups are encrypted'),
  n('dr_rto_hours', 9999, 2, 'recovery time objective in hours'),
  b('waf_enabled', 'a web application firewall fronts the server'),
  b('phi_detection', 'protected health information is detected (HIPAA mode)'),
];

const BY_NAME = new Map(INPUTS.map((d) => [d.name, d]));

/** The definition of an input (every name of INPUT_NAMES has one). */
export function inputDef(name: InputName): InputDef {
  return BY_NAME.get(name)!;
}

/** The CLI flag of an input: `audit_logging` → `audit-logging`. */
export function flagOf(name: InputName): string {
  return name.replaceAll('_', '-');
}
