import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { descendants, inheritFromParent, parentRollup, parentShouldSplit } from '../../src/tasks/parents.ts';
import type { TaskStatus } from '../../src/tasks/schema.ts';
import { task } from './fixtures.ts';

const p = suite('parent roll-up');
const parent = task('p', { status: 'waiting_for_subtasks' });
const kids = (...s: TaskStatus[]) => s.map((status, i) => task(`c${i}`, { status, parent_task_id: 'p' }));

p('a waiting parent is done when every child is done or closed', () => {
  assert.equal(parentRollup(parent, kids('done', 'closed', 'done')), { to: 'done', summary: 'Completed via 3 subtasks' });
});

p('a waiting parent is blocked naming the children that failed, refused or were cancelled', () => {
  assert.equal(parentRollup(parent, kids('failed', 'done', 'refused', 'cancelled')), {
    to: 'blocked', reason: 'Subtasks did not succeed: c0 (failed), c2 (refused), c3 (cancelled)', children: ['c0', 'c2', 'c3'],
  });
});

p('nothing happens while a child is still running, or to a parent that is not waiting', () => {
  assert.is(parentRollup(parent, kids('failed', 'in_progress')), null);
  assert.is(parentRollup(parent, kids('done', 'open')), null);
  assert.is(parentRollup(parent, kids('done', 'blocked')), null);
  assert.is(parentRollup(parent, []), null);
  assert.is(parentRollup(task('p', { status: 'in_progress' }), kids('done')), null);
});

p('self-create parks open, claimed and in-progress parents only', () => {
  const yes: TaskStatus[] = ['open', 'claimed', 'in_progress'];
  for (const s of ['open', 'claimed', 'in_progress', 'done', 'blocked', 'waiting_for_subtasks', 'failed'] as TaskStatus[]) {
    assert.is(parentShouldSplit({ status: s }), yes.includes(s), s);
  }
});

p('a subtask inherits tenant, cell and coordinator session unless it names its own', () => {
  const par = task('p', { tenant: 'acme', cell_id: 'cell-1', parent_session_id: 'coord-1' });
  assert.equal(inheritFromParent({ title: 'sub' }, par), { title: 'sub', parent_task_id: 'p', tenant: 'acme', cell_id: 'cell-1', parent_session_id: 'coord-1' });
  assert.is(inheritFromParent({ title: 'sub', cell_id: 'own' }, par).cell_id, 'own');
});

p('descendants walks the whole subtree breadth first and survives a cycle', () => {
  const tree: Record<string, string[]> = { r: ['a', 'b'], a: ['c'], c: ['r'], b: [] };
  const childrenOf = (id: string) => (tree[id] ?? []).map((k) => task(k));
  assert.equal(descendants('r', childrenOf), ['a', 'b', 'c']);
});

p.run();
