import { policies } from '../policy.ts';

/** PCI DSS requirements (12 policies). */
export const PCI_DSS = policies('pci_dss', [
  ['pci-req2-01', 'Req 2.2', 'high', 'Secure System Configuration', 'Agents run sandboxed with least privilege.', 'Sandbox agents and drop privileges they do not need.', ['sandbox_enabled', 'least_privilege_caps']],
  ['pci-req3-01', 'Req 3.4', 'critical', 'Encryption of Stored Cardholder Data', 'Stored data is encrypted.', 'Encrypt the disk that holds the repository and .sdd.', ['encrypt_at_rest']],
  ['pci-req4-01', 'Req 4.2', 'critical', 'TLS for Data in Transit', 'Data in transit is encrypted with TLS.', 'Serve the API over TLS (server.public_url https) and encrypt cluster traffic.', ['tls_enforced', 'encrypt_in_transit']],
  ['pci-req6-01', 'Req 6.3', 'high', 'Vulnerability Management', 'Vulnerabilities are found and managed.', 'Scan dependencies in CI and assert it with --vulnerability-scanning.', ['vulnerability_scanning']],
  ['pci-req6-02', 'Req 6.3', 'high', 'SAST in Development Pipeline', 'Static analysis runs in the pipeline.', 'Run SAST in CI and assert it with --sast-in-ci.', ['sast_in_ci']],
  ['pci-req7-01', 'Req 7.1', 'critical', 'Least Privilege Access', 'Access is role-based with least privilege.', 'Issue the narrowest role per token and drop process privileges.', ['rbac_enabled', 'least_privilege_caps']],
  ['pci-req8-01', 'Req 8.4', 'critical', 'Multi-Factor Authentication', 'People sign in with multiple factors.', 'Sign people in through an IdP that enforces MFA.', ['mfa_enabled']],
  ['pci-req8-02', 'Req 8.3', 'high', 'Password Complexity', 'Credentials are at least 12 characters long.', 'Require credentials of 12 characters or more.', ['password_min_length>=12']],
  ['pci-req10-01', 'Req 10.2', 'critical', 'Audit Logging of All Access', 'All access is logged in a verifying HMAC chain.', 'Keep auditing on and the chain verifying (svc audit verify).', ['audit_logging', 'audit_hmac_chain']],
  ['pci-req10-02', 'Req 10.5', 'high', 'Audit Log Retention (12 months)', 'At least 365 days of audit history are retained.', 'Keep audit segments for at least a year.', ['audit_retention_days>=365']],
  ['pci-req11-01', 'Req 11.3', 'high', 'Penetration Testing and Scanning', 'Systems are scanned regularly.', 'Scan regularly and assert it with --vulnerability-scanning.', ['vulnerability_scanning']],
  ['pci-req11-02', 'Req 6.4', 'high', 'WAF Deployment', 'A web application firewall fronts public endpoints.', 'Put a WAF in front of the server and assert it with --waf-enabled.', ['waf_enabled']],
]);
