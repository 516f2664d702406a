import { policies } from '../policy.ts';

/** SOC 2 Trust Services Criteria (15 policies). */
export const SOC2 = policies('soc2', [
  ['soc2-cc6-01', 'CC6.1', 'critical', 'Logical Access Controls', 'Access is restricted by role and people authenticate with multiple factors.', 'Keep auth.enabled on, issue role-bound tokens (svc token create --role …) and sign people in through an IdP that enforces MFA.', ['rbac_enabled', 'mfa_enabled']],
  ['soc2-cc6-02', 'CC6.1', 'high', 'Credential Rotation', 'No live credential is older than 90 days.', 'Revoke and reissue tokens older than 90 days (svc token list, svc token revoke, svc token create --expires 90d) and rotate the cluster secret.', ['secrets_rotation_days<=90']],
  ['soc2-cc6-03', 'CC6.1', 'medium', 'Session Timeout', 'Idle sessions expire within 60 minutes.', 'Set auth.sso.session_ttl_s to 3600 or less.', ['session_timeout_minutes<=60']],
  ['soc2-cc6-04', 'CC6.1', 'high', 'Agent Token Expiry', 'Agent tokens expire within 24 hours.', 'Issue agent tokens with --expires 24h or shorter.', ['agent_token_expiry_hours<=24']],
  ['soc2-cc6-05', 'CC6.1', 'medium', 'Minimum Credential Length', 'Credentials are at least 12 characters long.', 'Require credentials of 12 characters or more.', ['password_min_length>=12']],
  ['soc2-cc7-01', 'CC7.1', 'critical', 'Security Event Audit Logging', 'Security-relevant events are written to an audit log.', 'Run the board through svc up so every task transition and token change is audited under .sdd/audit.', ['audit_logging']],
  ['soc2-cc7-02', 'CC7.2', 'high', 'Tamper-Evident Audit Log', 'The audit log is HMAC-chained and verifies.', 'Keep .sdd/secrets/audit.key and fix the first broken link that svc audit verify names.', ['audit_logging', 'audit_hmac_chain']],
  ['soc2-cc7-03', 'CC7.2', 'medium', 'Audit Log Retention', 'At least 365 days of audit history are retained.', 'Keep audit segments under .sdd/audit (and refs/sdd/state) for at least a year.', ['audit_retention_days>=365']],
  ['soc2-cc7-04', 'CC7.2', 'high', 'Log Integrity Protection', 'Audit records cannot be altered without detection.', 'Verify the audit chain and keep its segments committed in refs/sdd/state.', ['log_integrity']],
  ['soc2-cc7-05', 'CC7.5', 'high', 'Incident Response Plan', 'An incident response plan exists and is maintained.', 'Write and maintain an incident response plan, then assert it with --incident-response-plan.', ['incident_response_plan']],
  ['soc2-cc8-01', 'CC8.1', 'high', 'Change Approval Gates', 'Changes pass quality gates before they merge.', 'Configure gates in .sdd/config.yaml so agent work is checked before it merges.', ['change_approval_gates']],
  ['soc2-cc9-01', 'CC9.1', 'high', 'Agent Sandbox Isolation', 'Agents run isolated in a sandbox.', 'Run agents and gates in a sandbox (bubblewrap) and assert it with --sandbox-enabled.', ['sandbox_enabled']],
  ['soc2-cc9-02', 'CC9.1', 'medium', 'Syscall Filtering', 'The agent sandbox filters system calls.', 'Enable a seccomp filter in the sandbox.', ['sandbox_enabled', 'seccomp_enabled']],
  ['soc2-cc9-03', 'CC9.2', 'high', 'Vulnerability Scanning', 'Dependencies are scanned for known vulnerabilities.', 'Scan dependencies in CI (npm audit, osv-scanner) and assert it with --vulnerability-scanning.', ['vulnerability_scanning']],
  ['soc2-cc9-04', 'CC9.2', 'low', 'SBOM Generation', 'A software bill of materials is kept.', 'Commit an SBOM (sbom.cdx.json, sbom.spdx.json or .sdd/artifacts/sbom/*.json).', ['sbom_enabled']],
]);
