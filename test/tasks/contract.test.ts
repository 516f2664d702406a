import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyCompletion } from '../../src/tasks/contract.ts';

const c = suite('completion contract');

c('a prose summary is accepted unchanged', () => {
  assert.equal(classifyCompletion({ result_summary: 'Added the endpoint and tests.' }), { kind: 'prose' });
  assert.equal(classifyCompletion({ result_summary: 'Fixed {the} bug' }), { kind: 'prose' });
  assert.equal(classifyCompletion({ result_summary: '{not json}' }), { kind: 'prose' }, 'braces that do not parse are prose');
  assert.equal(classifyCompletion({ result_summary: '[1,2]' }), { kind: 'prose' }, 'only an object is a payload');
});

c('an empty or whitespace-only summary is empty, even with a payload', () => {
  assert.equal(classifyCompletion({ result_summary: '' }), { kind: 'empty' });
  assert.equal(classifyCompletion({ result_summary: ' \n\t ' }), { kind: 'empty' });
  assert.equal(classifyCompletion({ result_summary: '  ', payload: { outcome: 'completed' } }), { kind: 'empty' });
});

c('a valid payload completes', () => {
  const payload = { outcome: 'completed', files_changed: ['a.ts'], commits: ['abc'], tests: { passed: 3, failed: 0 }, notes: 'ok' };
  assert.equal(classifyCompletion({ result_summary: 'done', payload }), { kind: 'completed', payload });
});

c('a JSON object that is the whole trimmed summary is the payload', () => {
  const r = classifyCompletion({ result_summary: '  {"outcome":"completed","tests":{"passed":1,"failed":0,"skipped":2}}\n' });
  assert.equal(r, { kind: 'completed', payload: { outcome: 'completed', tests: { passed: 1, failed: 0, skipped: 2 } } });
});

c('the payload field wins over JSON in the summary', () => {
  const r = classifyCompletion({ result_summary: '{"outcome":"bogus"}', payload: { outcome: 'completed' } });
  assert.is(r.kind, 'completed');
});

c('a validated refusal refuses', () => {
  const payload = { outcome: 'refused', refusal: { reason: 'touches billing', category: 'scope' } };
  assert.equal(classifyCompletion({ result_summary: 'no', payload }), { kind: 'refused', payload });
});

c('violations point at the first schema error', () => {
  const v = (p: unknown) => classifyCompletion({ result_summary: 'x', payload: p as Record<string, unknown> });
  assert.equal(v({ outcome: 'completed', tests: { passed: -1, failed: 0 } }), { kind: 'violation', path: '/tests/passed', reason: 'Expected integer to be greater or equal to 0' });
  assert.equal(v({ outcome: 'completed', tests: { passed: 1.5, failed: 0 } }), { kind: 'violation', path: '/tests/passed', reason: 'Expected integer' });
  assert.equal(v({ outcome: 'completed', tests: { passed: 1 } }), { kind: 'violation', path: '/tests/failed', reason: 'Expected required property' });
  assert.equal(v({ files_changed: [] }), { kind: 'violation', path: '/outcome', reason: 'Expected required property' });
  assert.equal(v({ outcome: 'maybe' }), { kind: 'violation', path: '/outcome', reason: 'Expected union value' });
  assert.equal(v({ outcome: 'completed', files_changed: [1] }), { kind: 'violation', path: '/files_changed/0', reason: 'Expected string' });
  assert.equal(v({ outcome: 'completed', extra: true }), { kind: 'violation', path: '/extra', reason: 'Unexpected property' });
});

c('a refusal without a reason is a violation at /refusal/reason', () => {
  const v = (p: unknown) => classifyCompletion({ result_summary: 'x', payload: p as Record<string, unknown> });
  assert.equal(v({ outcome: 'refused' }), { kind: 'violation', path: '/refusal/reason', reason: 'Expected required property' });
  assert.equal(v({ outcome: 'refused', refusal: { category: 'scope' } }), { kind: 'violation', path: '/refusal/reason', reason: 'Expected required property' });
  assert.is(v({ outcome: 'refused', refusal: { reason: '' } }).kind, 'violation');
});

c('a JSON summary that violates the contract is a violation, not prose', () => {
  const r = classifyCompletion({ result_summary: '{"outcome":"completed","tests":{"passed":"3","failed":0}}' });
  assert.equal(r, { kind: 'violation', path: '/tests/passed', reason: 'Expected integer' });
});

c.run();
