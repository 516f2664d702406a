import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyTask, classifyText, summariseRisk } from '../../src/compliance/index.ts';

test('levels are checked from the strictest down; matching is by substring', () => {
  assert.equal(classifyText('Citizen score for login', '', 'backend'), { level: 'unacceptable', reasons: ['social scoring'] });
  assert.equal(classifyText('Fix the checkout', 'patient records', 'backend'), { level: 'high', reasons: ['payments', 'health'] });
  assert.equal(classifyText('Credit the author', '', 'docs'), { level: 'high', reasons: ['authentication'] });
  assert.equal(classifyText('Fix typo', '', 'writer'), { level: 'minimal', reasons: ['low-impact maintenance or documentation work'] });
  assert.equal(classifyText('Add a cache', '', 'backend'), { level: 'limited', reasons: ['general software change outside EU AI Act high-risk domains'] });
  assert.equal(classifyText('Live   FACIAL\nrecognition', '', 'x').level, 'unacceptable');
});

test('a stricter level declared by the creator wins; an unknown one counts as minimal', () => {
  const base = { id: 't1', title: 'Add a cache', description: '', role: 'backend', created_at: '2026-01-01T00:00:00.000Z' };
  const r = classifyTask({ ...base, metadata: { eu_ai_act_risk: 'high' } });
  assert.is(r.risk_level, 'high');
  assert.is(r.approval_required, true);
  assert.is(r.svc_risk_level, 'high');
  assert.is(r.reasons[0], 'declared high by the task creator');
  assert.is(classifyTask({ ...base, metadata: { eu_ai_act_risk: 'bogus' } }).risk_level, 'limited');
  assert.is(classifyTask({ ...base, metadata: { eu_ai_act_risk: 'minimal' } }).risk_level, 'limited');
  assert.equal(classifyTask(base), { version: 1, task_id: 't1', title: 'Add a cache', role: 'backend', risk_level: 'limited', approval_required: false, svc_risk_level: 'medium', reasons: ['general software change outside EU AI Act high-risk domains'], assessed_at: base.created_at });
});

test('the summary counts every level and lists the five latest high-risk tasks, newest first', () => {
  const recs = Array.from({ length: 7 }, (_, i) => classifyTask({ id: `t${i}`, title: i % 2 ? 'login page' : 'fix typo', description: '', role: 'x', created_at: `2026-01-0${i + 1}T00:00:00.000Z` }));
  const s = summariseRisk(recs);
  assert.is(s.total, 7);
  assert.equal(s.counts, { minimal: 4, limited: 0, high: 3, unacceptable: 0 });
  assert.equal(s.latest_high_risk.map((r) => r.task_id), ['t5', 't3', 't1']);
});

test.run();
