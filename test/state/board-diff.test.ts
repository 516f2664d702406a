import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { describeChange, diffBoards, fieldChanges, parseTask, showValue, type TaskDoc } from '../../src/state/board-diff.ts';

const T = suite('state board diff (pure)');
const t = (id: string, more: Record<string, unknown> = {}): TaskDoc => ({ id, title: `T ${id}`, status: 'open', version: 1, ...more });

T('boards: added, removed and changed tasks, sorted by id, with the fields that changed', () => {
  const a = new Map([['b', t('b')], ['c', t('c')], ['d', t('d')]]);
  const b = new Map([['a', t('a')], ['c', t('c', { status: 'claimed', version: 2, claimed_by_session: 's1' })], ['d', t('d')]]);
  const d = diffBoards(a, b);
  assert.equal(d.added.map((x) => x.id), ['a']);
  assert.equal(d.removed.map((x) => x.id), ['b']);
  assert.equal(d.changed, [{ id: 'c', title: 'T c', fields: {
    claimed_by_session: { from: undefined, to: 's1' }, status: { from: 'open', to: 'claimed' }, version: { from: 1, to: 2 },
  } }]);
  assert.equal(fieldChanges({ m: { x: [1] } }, { m: { x: [1] } }), {}, 'deep values compare by content');
});

T('a change without an audit record reads from the files: create, delete, status move or fields', () => {
  assert.equal(describeChange(null, t('a'), undefined), { change: 'create', detail: 'open' });
  assert.equal(describeChange(t('a'), null, undefined), { change: 'delete', detail: null });
  assert.equal(describeChange(t('a'), t('a', { status: 'done', version: 2 }), undefined), { change: 'update', detail: 'open → done' });
  assert.equal(describeChange(t('a'), t('a', { priority: 3, role: 'qa', version: 2, updated_at: 'x' }), undefined), { change: 'update', detail: 'priority, role' });
  assert.equal(describeChange(t('a'), t('a', { status: 'claimed' }), { action: 'task.claim', actor: 'bob', ts: 'x' }), { change: 'claim', detail: 'open → claimed' });
});

T('values for people and task files that are not tasks', () => {
  assert.is(showValue('x'), '"x"');
  assert.is(showValue(undefined), '(absent)');
  assert.is(showValue('y'.repeat(100)).length, 60);
  assert.is(parseTask(Buffer.from('{"no":"id"}')), null);
  assert.is(parseTask(Buffer.from('not json')), null);
  assert.equal(parseTask(Buffer.from('{"id":"a"}')), { id: 'a' });
});

T.run();
