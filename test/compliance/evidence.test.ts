import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { observe, type Facts } from '../../src/compliance/index.ts';

const AS_OF = Date.parse('2026-01-15T00:00:00Z');
const facts = (over: Partial<Facts> = {}): Facts => ({
  stateCommit: 'abc123',
  audit: { segments: [{ path: '.sdd/audit/2025-01-10.jsonl', date: '2025-01-10' }, { path: '.sdd/audit/2026-01-14.jsonl', date: '2026-01-14' }], records: 6, verdict: 'ok' },
  config: { present: true, authEnabled: true, requiredGates: 1, publicUrl: null, serverTls: false, sso: { configured: false, requireMfa: false, sessionTtlS: 86_400 }, hipaa: false },
  credentials: [{ kind: 'token', ref: '.sdd/secrets/tokens.json', created_at: '2025-12-16T00:00:00Z', role: 'admin', lifetime_h: null }],
  sbom: [], lockfiles: ['package-lock.json'],
  ...over,
});

test('audit retention is the age in days of the oldest segment; none means 0', () => {
  assert.is(observe(facts(), AS_OF).audit_retention_days?.value, 370);
  const archived = facts({ audit: { segments: [{ path: '.sdd/audit/archive/2024-12-11.jsonl.gz', date: '2024-12-11' }, ...facts().audit.segments], records: 6, verdict: 'ok' } });
  assert.is(observe(archived, AS_OF).audit_retention_days?.value, 400);
  assert.is(observe(facts({ audit: { segments: [], records: 0, verdict: 'empty' } }), AS_OF).audit_retention_days?.value, 0);
});

test('the HMAC chain and log integrity are observed from the verifier; without the key they are not observed', () => {
  const ok = observe(facts(), AS_OF);
  assert.is(ok.audit_hmac_chain?.value, true);
  assert.ok(ok.audit_hmac_chain?.refs.includes('refs/sdd/state@abc123'));
  assert.is(ok.log_integrity?.value, true);
  const broken = observe(facts({ audit: { ...facts().audit, verdict: 'broken', broken: 'line 3: hmac mismatch' } }), AS_OF);
  assert.is(broken.audit_hmac_chain?.value, false);
  assert.match(broken.audit_hmac_chain!.note, 'hmac mismatch');
  assert.is(observe(facts({ stateCommit: null }), AS_OF).log_integrity?.value, false);
  const noKey = observe(facts({ audit: { ...facts().audit, verdict: 'no-key' } }), AS_OF);
  assert.is(noKey.audit_hmac_chain, undefined);
  assert.is(noKey.audit_logging?.value, true);
});

test('credentials give rotation age and RBAC; SSO with require_mfa gives MFA and the session timeout; https gives TLS', () => {
  const o = observe(facts(), AS_OF);
  assert.is(o.secrets_rotation_days?.value, 30);
  assert.is(o.rbac_enabled?.value, true);
  assert.is(o.mfa_enabled, undefined);
  assert.is(o.tls_enforced, undefined);
  assert.is(observe(facts({ credentials: [] }), AS_OF).secrets_rotation_days, undefined);
  assert.is(observe(facts({ config: { ...facts().config, authEnabled: false } }), AS_OF).rbac_enabled?.value, false);
  const sso = observe(facts({ config: { ...facts().config, publicUrl: 'https://svc.example', sso: { configured: true, requireMfa: true, sessionTtlS: 1800 } } }), AS_OF);
  assert.is(sso.mfa_enabled?.value, true);
  assert.is(sso.session_timeout_minutes?.value, 30);
  assert.is(sso.tls_enforced?.value, true);
  assert.is(observe(facts({ config: { ...facts().config, publicUrl: 'http://svc.example' } }), AS_OF).tls_enforced?.value, false);
});

test('gates, SBOM and lock files are observed either way', () => {
  const o = observe(facts(), AS_OF);
  assert.is(o.change_approval_gates?.value, true);
  assert.is(o.sbom_enabled?.value, false);
  assert.is(o.dependency_pinning?.value, true);
  assert.is(observe(facts({ sbom: ['sbom.cdx.json'] }), AS_OF).sbom_enabled?.value, true);
});

test.run();
