// The ticket → task decision table (pure): create, update an open task, cancel an open one, note otherwise.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { planTicket, roleFromLabels, ticketFields, type Ticket, type TicketAction, type TicketTask } from '../../src/webhooks/ticket.ts';

const T = suite('webhooks: ticket plan');
const ticket = (over: Partial<Ticket> = {}): Ticket => ({
  adapter: 'tracker_b', id: '2001', key: 'octo/app#7', title: 'Retry uploads', body: 'Uploads fail.', url: 'https://github.com/octo/app/issues/7',
  state: 'open', labels: [], author: 'octocat', updated_at: '2026-11-20T10:00:00.000Z', ...over,
});
const taskOf = (t: Ticket, status: string): TicketTask => ({ id: 'task1', status, ...ticketFields(t) });
const plan = (action: TicketAction, t: Ticket, task?: TicketTask) => planTicket({ action, ticket: t }, task);

T('a new open ticket creates a task; a closed or deleted one without a task creates nothing', () => {
  assert.is(plan('opened', ticket()).kind, 'create');
  assert.is(plan('polled', ticket()).kind, 'create');
  assert.is(plan('edited', ticket()).kind, 'create', 'an edit of a ticket never seen still makes its task');
  assert.equal(plan('closed', ticket({ state: 'closed' })), { kind: 'unchanged', taskId: null });
  assert.equal(plan('deleted', ticket()), { kind: 'unchanged', taskId: null });
});

T('an edit updates an open task, and only when something changed', () => {
  const t = ticket();
  assert.equal(plan('edited', t, taskOf(t, 'open')), { kind: 'unchanged', taskId: 'task1' });
  const edited = ticket({ title: 'Retry uploads on 502' });
  const p = plan('edited', edited, taskOf(t, 'open'));
  assert.is(p.kind, 'update');
  assert.is((p as { fields: { title: string } }).fields.title, 'octo/app#7: Retry uploads on 502');
  const relabelled = plan('labelled', ticket({ labels: ['role:qa'] }), taskOf(t, 'open'));
  assert.equal([relabelled.kind, (relabelled as { fields: { role: string } }).fields.role], ['update', 'qa']);
  for (const status of ['claimed', 'in_progress', 'done', 'closed']) assert.is(plan('edited', edited, taskOf(t, status)).kind, 'note', status);
});

T('closed upstream: an open task is cancelled, a working one is noted, a cancelled one left alone', () => {
  const t = ticket();
  const closed = ticket({ state: 'closed' });
  assert.equal(plan('closed', closed, taskOf(t, 'open')), { kind: 'cancel', taskId: 'task1', reason: 'ticket octo/app#7 closed upstream' });
  assert.equal(plan('deleted', t, taskOf(t, 'open')), { kind: 'cancel', taskId: 'task1', reason: 'ticket octo/app#7 deleted upstream' });
  assert.is(plan('closed', closed, taskOf(t, 'in_progress')).kind, 'note');
  assert.is(plan('polled', closed, taskOf(t, 'claimed')).kind, 'note');
  assert.is(plan('closed', closed, taskOf(t, 'cancelled')).kind, 'unchanged');
});

T('reopened upstream after a cancel: a new task; any other change to a cancelled task: noted only', () => {
  const t = ticket();
  assert.is(plan('reopened', t, taskOf(t, 'cancelled')).kind, 'create');
  assert.is(plan('edited', ticket({ title: 'x' }), taskOf(t, 'cancelled')).kind, 'note');
  assert.is(plan('polled', t, taskOf(t, 'cancelled')).kind, 'unchanged');
});

T('role:<name> labels set the role (last valid one wins); others leave backend', () => {
  assert.is(roleFromLabels([]), 'backend');
  assert.is(roleFromLabels(['bug', 'role:qa']), 'qa');
  assert.is(roleFromLabels(['Role: Security']), 'security');
  assert.is(roleFromLabels(['role:qa', 'role:Not Valid!']), 'qa');
  assert.is(roleFromLabels(['role:frontend', 'role:qa']), 'qa');
});

T('task fields: key in the title, body then where the ticket lives, cut to the task limits', () => {
  const f = ticketFields(ticket());
  assert.equal(f, { title: 'octo/app#7: Retry uploads', description: 'Uploads fail.\n\nTicket octo/app#7 (https://github.com/octo/app/issues/7), opened by octocat.', role: 'backend' });
  const long = ticketFields(ticket({ title: 'x'.repeat(600), body: 'y'.repeat(200_000) }));
  assert.is(long.title.length, 500);
  assert.is(long.description.length, 100_000);
  assert.is(ticketFields(ticket({ title: '', key: '' })).title, 'tracker_b ticket 2001');
});

T.run();
