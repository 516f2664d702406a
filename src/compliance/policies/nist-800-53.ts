import { policies } from '../policy.ts';

/** NIST SP 800-53 controls (18 policies). */
export const NIST_800_53 = policies('nist_800_53', [
  ['nist-ac-02', 'AC-2', 'high', 'Account Management', 'Accounts are role-based and reviewed every 90 days.', 'Issue role-bound tokens and review them every 90 days or sooner.', ['rbac_enabled', 'access_review_days<=90']],
  ['nist-ac-03', 'AC-3', 'critical', 'Access Enforcement', 'Access is enforced by role.', 'Keep auth.enabled on and issue role-bound tokens.', ['rbac_enabled']],
  ['nist-ac-06', 'AC-6', 'high', 'Least Privilege', 'Processes run sandboxed with least privilege.', 'Sandbox agents and drop privileges they do not need.', ['least_privilege_caps', 'sandbox_enabled']],
  ['nist-ac-17', 'AC-17', 'high', 'Remote Access Security', 'Remote access uses MFA over TLS.', 'Serve the API over TLS and sign people in with MFA.', ['mfa_enabled', 'tls_enforced']],
  ['nist-au-02', 'AU-2', 'high', 'Audit Event Selection', 'Security-relevant events are audited.', 'Run the board through svc up so changes are audited.', ['audit_logging']],
  ['nist-au-03', 'AU-3', 'high', 'Audit Record Content', 'Audit records are complete and chained.', 'Keep auditing on and the chain verifying.', ['audit_logging', 'audit_hmac_chain']],
  ['nist-au-09', 'AU-9', 'high', 'Audit Record Protection', 'Audit records are protected from tampering.', 'Verify the audit chain and keep its segments in refs/sdd/state.', ['log_integrity']],
  ['nist-au-11', 'AU-11', 'medium', 'Audit Record Retention', 'At least 365 days of audit history are retained.', 'Keep audit segments for at least a year.', ['audit_retention_days>=365']],
  ['nist-cm-02', 'CM-2', 'medium', 'Baseline Configuration', 'Dependencies are pinned to a baseline.', 'Commit a lock file.', ['dependency_pinning']],
  ['nist-cm-07', 'CM-7', 'high', 'Least Functionality', 'Agents run sandboxed, syscall-filtered and network-isolated.', 'Sandbox agents with seccomp and no network beyond what they need.', ['sandbox_enabled', 'seccomp_enabled', 'network_isolation']],
  ['nist-ia-02', 'IA-2', 'critical', 'User Identification and Authentication', 'Users are identified by role-bound credentials with MFA.', 'Sign people in with MFA and issue role-bound tokens.', ['mfa_enabled', 'rbac_enabled']],
  ['nist-ia-05', 'IA-5', 'high', 'Authenticator Management', 'Credentials rotate within 90 days and are at least 12 characters.', 'Rotate tokens within 90 days and require 12-character credentials.', ['secrets_rotation_days<=90', 'password_min_length>=12']],
  ['nist-ra-05', 'RA-5', 'high', 'Vulnerability Monitoring', 'Vulnerabilities are monitored.', 'Scan dependencies in CI.', ['vulnerability_scanning']],
  ['nist-sc-08', 'SC-8', 'high', 'Transmission Confidentiality and Integrity', 'Transmissions are protected with TLS.', 'Serve the API over TLS and encrypt cluster traffic.', ['tls_enforced', 'encrypt_in_transit']],
  ['nist-sc-28', 'SC-28', 'high', 'Protection of Information at Rest', 'Stored information is encrypted.', 'Encrypt the disk that holds the repository.', ['encrypt_at_rest']],
  ['nist-si-02', 'SI-2', 'high', 'Flaw Remediation', 'Flaws are found by scanning and static analysis.', 'Run dependency scanning and SAST in CI.', ['vulnerability_scanning', 'sast_in_ci']],
  ['nist-si-03', 'SI-3', 'high', 'Malicious Code Protection', 'Agents run sandboxed with syscall filtering.', 'Sandbox agents with a seccomp filter.', ['sandbox_enabled', 'seccomp_enabled']],
  ['nist-si-10', 'SI-10', 'high', 'Information Input Validation', 'Inputs are filtered by a sandbox and a WAF.', 'Sandbox agents and put a WAF in front of the server.', ['sandbox_enabled', 'waf_enabled']],
]);
