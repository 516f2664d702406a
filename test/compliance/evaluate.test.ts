import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CATALOGUE, FAIL_ON, FRAMEWORKS, INPUTS, INPUT_NAMES, breaches, evaluatePolicy, inputDef, inputsOf, policiesOf, snapshot,
  type InputName, type InputValue, type PolicyResult,
} from '../../src/compliance/index.ts';

const all = (v: 'secure' | 'worst') => Object.fromEntries(INPUTS.map((d) => [d.name, d[v]])) as Record<InputName, InputValue>;

test('the catalogue holds the 60 policies: soc2 15, iso27001 15, pci_dss 12, nist_800_53 18, frameworks in sorted order', () => {
  assert.is(CATALOGUE.length, 60);
  const count = (fw: string) => CATALOGUE.filter((p) => p.framework === fw).length;
  assert.equal([count('soc2'), count('iso27001'), count('pci_dss'), count('nist_800_53')], [15, 15, 12, 18]);
  assert.equal([...new Set(CATALOGUE.map((p) => p.framework))], [...FRAMEWORKS].sort());
  assert.is(new Set(CATALOGUE.map((p) => p.id)).size, 60);
  for (const p of CATALOGUE) for (const k of ['name', 'description', 'remediation', 'control_id'] as const) assert.ok(p[k].length > 3, `${p.id} ${k}`);
});

test('every policy can pass and can fail: secure inputs pass it, any one input at its least-secure value fails it', () => {
  for (const p of CATALOGUE) {
    assert.ok(evaluatePolicy(p, snapshot({}, all('secure'))).passed, `${p.id} passes on secure inputs`);
    for (const name of inputsOf(p)) {
      const flags = { ...all('secure'), [name]: inputDef(name).worst };
      const r = evaluatePolicy(p, snapshot({}, flags));
      assert.not.ok(r.passed, `${p.id} fails with ${name}=${String(inputDef(name).worst)}`);
      assert.is(r.finding, `Policy ${p.id} (${p.control_id}) FAILED: ${p.description}`);
    }
  }
});

test('every input but phi_detection (HIPAA mode) is read by some policy, and each has a flag', () => {
  const read = new Set(CATALOGUE.flatMap(inputsOf));
  assert.equal(INPUT_NAMES.filter((n) => !read.has(n)), ['phi_detection']);
});

test('a flag makes an input operator_asserted even when the tree shows it; observed-only policies are evidenced', () => {
  const cc701 = policiesOf(['soc2']).find((p) => p.id === 'soc2-cc7-01')!;
  const observed = { audit_logging: { value: true, refs: ['.sdd/audit/2026-01-14.jsonl'], note: '' } };
  const seen = evaluatePolicy(cc701, snapshot(observed, {}));
  assert.is(seen.evidence_status, 'evidenced');
  assert.equal(seen.evidence_refs, ['.sdd/audit/2026-01-14.jsonl']);
  assert.ok(seen.control_statement.startsWith('Observed from the tree: audit_logging=true.'));
  const flagged = evaluatePolicy(cc701, snapshot(observed, { audit_logging: true }));
  assert.is(flagged.evidence_status, 'operator_asserted');
  assert.equal(flagged.asserted_inputs, ['audit_logging']);
  assert.ok(flagged.control_statement.startsWith('The operator declares audit_logging=true.'));
  const cc601 = policiesOf(['soc2'])[0]!;
  const none = evaluatePolicy(cc601, snapshot({}, {}));
  assert.equal(none.asserted_inputs, ['mfa_enabled', 'rbac_enabled']);
  assert.not.ok(none.passed);
});

test('--secrets-rotation-days defaults to 30 when no credential is seen (asserted), the least-secure value elsewhere', () => {
  const s = snapshot({}, {});
  assert.is(s.values.secrets_rotation_days, 30);
  assert.equal(s.evidence.secrets_rotation_days, { status: 'asserted', source: 'default' });
  assert.is(s.values.session_timeout_minutes, 9999);
  assert.is(s.values.mfa_enabled, false);
});

test('breaches: each threshold fails on failures of that severity or worse; none never fails', () => {
  const r = (severity: PolicyResult['severity'], passed = false) => ({ severity, passed }) as PolicyResult;
  const cases: [PolicyResult[], Record<string, boolean>][] = [
    [[r('critical')], { critical: true, high: true, medium: true, low: true, none: false }],
    [[r('high')], { critical: false, high: true, medium: true, low: true, none: false }],
    [[r('medium')], { critical: false, high: false, medium: true, low: true, none: false }],
    [[r('low')], { critical: false, high: false, medium: false, low: true, none: false }],
    [[r('critical', true), r('low', true)], { critical: false, high: false, medium: false, low: false, none: false }],
  ];
  for (const [results, want] of cases) for (const f of FAIL_ON) assert.is(breaches(results, f), want[f], `${results.map((x) => x.severity)} --fail-on ${f}`);
});

test.run();
