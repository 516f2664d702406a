import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import * as S from '../../src/tasks/schema.ts';
import { transition } from '../../src/tasks/machine.ts';
import { T0, at } from './fixtures.ts';

const check = (schema: TSchema, v: unknown) => TypeCompiler.Compile(schema, S.TASK_SCHEMAS).Check(v);
const firstPath = (schema: TSchema, v: unknown) => TypeCompiler.Compile(schema, S.TASK_SCHEMAS).Errors(v).First()?.path;

const s = suite('task schemas');

s('a new task has every field of the record with the documented defaults', () => {
  const t = S.newTask({ title: 'Write docs' }, { id: 'abc', now: T0, tenant: 'default' });
  assert.equal(t, {
    id: 'abc', title: 'Write docs', description: '', role: 'backend', priority: 2, scope: 'medium', complexity: 'medium',
    status: 'open', assigned_agent: null, claimed_by_session: null, parent_session_id: null, parent_task_id: null,
    depends_on: [], owned_files: [], cell_id: null, tenant: 'default', version: 1, estimated_minutes: 30, model: null,
    result_summary: null, failure: null, status_reason: null, branch: null, metadata: {}, chat_context: null, node_id: null,
    retry_count: 0, max_retries: 2, claim_count: 0, created_at: T0, updated_at: T0, claimed_at: null, completed_at: null,
  });
  assert.equal(Object.keys(t), Object.keys(t).sort(), 'keys in file order: written without a sort');
  assert.ok(check(S.Task, t), 'a new task validates against Task');
  assert.ok(check(S.Task, transition(t, 'fail', { reason: 'x' }, at(1))), 'so does a failed one');
});

s('the tenant comes from the caller, not the body; duplicate deps collapse', () => {
  const t = S.newTask({ title: 'x', tenant: 'evil', depends_on: ['a', 'a', 'b'] }, { id: 'x', now: T0, tenant: 'acme' });
  assert.equal([t.tenant, t.depends_on], ['acme', ['a', 'b']]);
});

s('create limits answer with the offending field', () => {
  assert.ok(check(S.TaskCreate, { title: 'ok', unknown_key: 1 }), 'unknown keys are ignored');
  assert.is(firstPath(S.TaskCreate, {}), '/title');
  assert.is(firstPath(S.TaskCreate, { title: '' }), '/title');
  assert.is(firstPath(S.TaskCreate, { title: 'x'.repeat(501) }), '/title');
  assert.is(firstPath(S.TaskCreate, { title: 'x', description: 'd'.repeat(100_001) }), '/description');
  assert.is(firstPath(S.TaskCreate, { title: 'x', role: 'Backend' }), '/role');
  assert.is(firstPath(S.TaskCreate, { title: 'x', priority: 1001 }), '/priority');
  assert.is(firstPath(S.TaskCreate, { title: 'x', scope: 'huge' }), '/scope');
  assert.is(firstPath(S.TaskCreate, { title: 'x', depends_on: ['../etc'] }), '/depends_on/0');
  assert.is(firstPath(S.TaskCreate, { title: 'x', depends_on: Array.from({ length: 101 }, (_, i) => `d${i}`) }), '/depends_on');
  assert.is(firstPath(S.TaskCreate, { title: 'x', owned_files: Array.from({ length: 101 }, (_, i) => `f${i}`) }), '/owned_files');
  assert.is(firstPath(S.TaskCreate, { title: 'x', estimated_minutes: 0 }), '/estimated_minutes');
  assert.is(firstPath(S.TaskCreate, { title: 'x', max_retries: 101 }), '/max_retries');
  assert.is(firstPath(S.TaskSelfCreate, { title: 'x' }), '/parent_task_id');
});

s('metadata over 50,000 bytes of JSON is too large', () => {
  assert.is(S.metadataTooLarge({ a: 'x'.repeat(49_000) }), false);
  assert.is(S.metadataTooLarge({ a: 'é'.repeat(25_000) }), true, 'bytes, not characters');
});

s('envelopes reference Task by $ref and validate with TASK_SCHEMAS as refs', () => {
  const t = S.newTask({ title: 'x' }, { id: 'x', now: T0, tenant: 'default' });
  assert.ok(check(S.BatchCreateResponse, { created: [t], skipped_titles: [] }));
  assert.not.ok(check(S.BatchCreateResponse, { created: [{ id: 'x' }], skipped_titles: [] }));
  assert.ok(check(S.BatchCreateRequest, { tasks: [{ title: 'a' }] }));
  assert.ok(check(S.BatchClaimRequest, { task_ids: ['a'] }));
  assert.not.ok(check(S.BatchClaimRequest, { task_ids: [] }));
  for (const schema of S.TASK_SCHEMAS) assert.type(schema.$id, 'string');
});

s('query schemas convert and default like query strings', () => {
  const q = Value.Parse(S.SearchQuery, S.TASK_SCHEMAS, {}) as S.SearchQuery;
  assert.equal(q, { page: 1, per_page: 20, sort: 'created_at', order: 'desc' });
  assert.not.ok(check(S.SearchQuery, { ...q, sort: 'random' }));
  assert.not.ok(check(S.ListQuery, { limit: 501 }));
  assert.not.ok(check(S.ListQuery, { offset: -1 }));
  assert.equal(Value.Parse(S.ArchiveQuery, {}), { limit: 50 });
});

s('batch titles dedupe trimmed and case-insensitively, against the board and within the batch', () => {
  const r = S.dedupeBatch([{ title: 'A' }, { title: ' b ' }, { title: 'a ' }, { title: 'C' }], new Set([S.titleKey('B')]));
  assert.equal(r, { keep: [{ title: 'A' }, { title: 'C' }], skipped_titles: [' b ', 'a '] });
});

s('the archive record carries the duration in seconds', () => {
  const t = { ...S.newTask({ title: 'x' }, { id: 'x', now: T0, tenant: 'default' }), status: 'done' as const, completed_at: at(90.5), result_summary: 'ok' };
  const r = S.toArchiveRecord(t);
  assert.equal([r.task_id, r.status, r.duration_s, r.completed_at, r.result_summary], ['x', 'done', 90.5, at(90.5), 'ok']);
  assert.ok(check(S.ArchiveRecord, r));
});

s.run();
