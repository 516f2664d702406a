import { policies } from '../policy.ts';

/** ISO/IEC 27001 Annex A (15 policies). */
export const ISO27001 = policies('iso27001', [
  ['iso27001-a5-01', 'A.5.1', 'high', 'Information Security Policy', 'Security events are logged and access is role-based.', 'Keep auditing and role-based tokens on.', ['audit_logging', 'rbac_enabled']],
  ['iso27001-a8-01', 'A.8.1', 'medium', 'Asset Inventory (SBOM)', 'Software assets are inventoried in an SBOM.', 'Commit an SBOM (sbom.cdx.json, sbom.spdx.json or .sdd/artifacts/sbom/*.json).', ['sbom_enabled']],
  ['iso27001-a8-02', 'A.8.2', 'high', 'Data Classification', 'Information is classified by sensitivity.', 'Classify the data the agents handle, then assert it with --data-classification.', ['data_classification']],
  ['iso27001-a9-01', 'A.9.1', 'critical', 'Access Control Policy', 'Access is controlled by role.', 'Keep auth.enabled on and issue role-bound tokens.', ['rbac_enabled']],
  ['iso27001-a9-02', 'A.9.2', 'medium', 'User Registration and Deprovisioning', 'Access is reviewed at least every 90 days.', 'Review tokens and group mappings every 90 days or sooner; assert it with --access-review-days.', ['access_review_days<=90']],
  ['iso27001-a9-03', 'A.9.4', 'high', 'Multi-Factor Authentication', 'People sign in with multiple factors.', 'Sign people in through an IdP that enforces MFA (auth.sso with require_mfa).', ['mfa_enabled']],
  ['iso27001-a10-01', 'A.10.1', 'critical', 'Cryptographic Controls', 'Data is encrypted at rest and in transit.', 'Encrypt the disk that holds .sdd and serve the API over TLS.', ['encrypt_at_rest', 'encrypt_in_transit']],
  ['iso27001-a10-02', 'A.10.1', 'high', 'TLS Enforcement', 'Clients reach the server over TLS.', 'Put the server behind TLS and set server.public_url to its https address.', ['tls_enforced']],
  ['iso27001-a12-01', 'A.12.4', 'high', 'Operational Security Logging', 'Operations are logged and the log is tamper-evident.', 'Keep auditing on and the audit chain verifying.', ['audit_logging', 'log_integrity']],
  ['iso27001-a12-02', 'A.12.2', 'high', 'Malware and Vulnerability Protection', 'Software is scanned for vulnerabilities.', 'Scan dependencies in CI and assert it with --vulnerability-scanning.', ['vulnerability_scanning']],
  ['iso27001-a12-03', 'A.12.3', 'high', 'Backup and Recovery', 'State is backed up and backups are encrypted.', 'Back up the repository (refs/sdd/state included) to encrypted storage.', ['backup_enabled', 'backup_encryption']],
  ['iso27001-a14-01', 'A.14.2', 'high', 'Secure Development', 'Static analysis and vulnerability scanning run in development.', 'Run SAST and dependency scanning in CI.', ['sast_in_ci', 'vulnerability_scanning']],
  ['iso27001-a14-02', 'A.14.2', 'medium', 'Dependency Integrity', 'Dependencies are pinned.', 'Commit a lock file (package-lock.json, pnpm-lock.yaml, poetry.lock, Cargo.lock, go.sum…).', ['dependency_pinning']],
  ['iso27001-a16-01', 'A.16.1', 'high', 'Incident Management Process', 'Incidents are handled by a defined process.', 'Write an incident response plan and assert it with --incident-response-plan.', ['incident_response_plan']],
  ['iso27001-a17-01', 'A.17.1', 'medium', 'Business Continuity and DR', 'Recovery completes within 4 hours.', 'Plan recovery within 4 hours and assert it with --dr-rto-hours.', ['dr_rto_hours<=4']],
]);
