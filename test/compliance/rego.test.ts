import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { CATALOGUE, INPUTS, evaluatePolicy, inputDef, inputsOf, regoPackage, renderRego, snapshot, type InputName, type InputValue } from '../../src/compliance/index.ts';
import { evalRule, inputRefs, parseRego } from './rego-grammar.ts';
import { fixtureRepo, svcOut } from './tree.ts';

test('the grammar refuses what OPA refuses in Rego v1', () => {
  assert.throws(() => parseRego('package a\n\nallow {\n\tinput.x == true\n}\n'), /'if' before the rule body/);
  assert.throws(() => parseRego('package a\ndefault allow\n'), /':='/);
  assert.throws(() => parseRego('allow if { true }\n'), /'package'/);
  assert.throws(() => parseRego('package a\nallow if {\n\tinput.x ==\n}\n'), /a term/);
  assert.throws(() => parseRego('package a\nallow if {\n\tinput .x == true\n}\n'), /end of the rule|';'/);
  assert.ok(parseRego('package a.b\nimport rego.v1\n\ndefault allow := false\n\nallow if {\n\tsome x in input.xs\n\tcount(input.xs) > 0; input.y[0] != "z"\n}\n\nv := {"a": [1, 2]} if input.q\n'));
});

test('every file `svc compliance rego` writes parses as Rego v1, one package per policy, reading exactly the policy inputs', async () => {
  const repo = fixtureRepo('empty');
  try {
    await svcOut(repo.dir, ['compliance', 'rego']);
    let n = 0;
    for (const p of CATALOGUE) {
      const text = readFileSync(join(repo.dir, '.sdd/compliance/rego', p.framework, `${p.id}.rego`), 'utf8');
      assert.is(text, renderRego(p));
      const m = parseRego(text);
      assert.is(m.pkg, regoPackage(p));
      assert.equal(inputRefs(m), inputsOf(p), p.id);
      // The METADATA block is YAML, as OPA reads it.
      const meta = parse(m.comments.slice(1).map((c) => c.replace(/^# ?/, '')).join('\n'));
      assert.equal([meta.title, meta.custom.policy_id, meta.custom.severity], [p.name, p.id, p.severity]);
      n++;
    }
    assert.is(n, 60);
    assert.is(readdirSync(join(repo.dir, '.sdd/compliance/rego')).length, 4);
  } finally {
    repo.cleanup();
  }
});

test('allow in each Rego module agrees with the evaluator on passing and failing inputs', () => {
  const secure = Object.fromEntries(INPUTS.map((d) => [d.name, d.secure])) as Record<InputName, InputValue>;
  for (const p of CATALOGUE) {
    const m = parseRego(renderRego(p));
    const cases = [secure, ...inputsOf(p).map((n) => ({ ...secure, [n]: inputDef(n).worst }))];
    for (const input of cases) assert.is(evalRule(m, 'allow', input), evaluatePolicy(p, snapshot({}, input)).passed, `${p.id} ${JSON.stringify(input)}`);
  }
});

test.run();
