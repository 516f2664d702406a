// The fused cycle of a worker: POST /tasks/{id}/complete?next=<role> (and fail) finishes a task and claims
// the next one of the role for the same session, in one request; also through `svc task complete --next`.
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '../../src/auth/index.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { runCli } from '../helpers/server.ts';
import { boot, title, type Api } from './support.ts';

let a: Api;
const T = suite('fused cycle: finish and claim the next task in one request');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });

// A role of its own per test, so tasks of other tests never come next.
let roles = 0;
const role = () => `cycle${++roles}`;

T('complete?next=<role> answers {completed, next}: the best open task of the role, claimed for the same session', async () => {
  const r0 = role();
  const first = await a.claimed({ role: r0 }, 'worker-7');
  const later = await a.create({ role: r0, priority: 5 });
  const sooner = await a.create({ role: r0, priority: 1 });
  const r = await a.s.api('POST', `/tasks/${first.id}/complete?next=${r0}`, { result_summary: 'did it' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.completed.id, first.id);
  assert.is(r.body.completed.status, 'done');
  assert.is(r.body.next.id, sooner.id, 'priority first');
  assert.is(r.body.next.status, 'claimed');
  assert.is(r.body.next.claimed_by_session, 'worker-7', 'claimed for the session that held the finished task');
  assert.is((await a.get(later.id)).status, 'open');
  // The next call of the loop finishes that one and takes the last.
  const again = await a.s.api('POST', `/tasks/${sooner.id}/complete?next=${r0}`, { result_summary: 'and this' });
  assert.is(again.body.next.id, later.id);
  const last = await a.s.api('POST', `/tasks/${later.id}/complete?next=${r0}`, { result_summary: 'done too' });
  assert.equal([last.status, last.body.completed.status, last.body.next], [200, 'done', null], 'none left: next is null');
});

T('fail?next=<role> fails the task and claims the next; next_session names the next claim\'s session; without ?next complete and fail answer the task as before', async () => {
  const r0 = role();
  const first = await a.claimed({ role: r0 }, 'worker-8');
  const second = await a.create({ role: r0 });
  const r = await a.s.api('POST', `/tasks/${first.id}/fail?next=${r0}`, { reason: 'broken input' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.completed.status, r.body.completed.failure.reason], ['failed', 'broken input']);
  assert.equal([r.body.next.id, r.body.next.claimed_by_session], [second.id, 'worker-8']);
  const third = await a.create({ role: r0 });
  const named = await a.s.api('POST', `/tasks/${second.id}/complete?next=${r0}&next_session=worker-9`, { result_summary: 'ok' });
  assert.equal([named.body.completed.status, named.body.next.id, named.body.next.claimed_by_session], ['done', third.id, 'worker-9'], 'next_session names the session of the next claim');
  const plain = await a.verb(third.id, 'complete', { result_summary: 'ok' });
  assert.equal([plain.status, plain.body.id, plain.body.status], [200, third.id, 'done']);
});

T('a refused finish claims nothing: the error carries its code and the open task stays open', async () => {
  const r0 = role();
  const done = await a.claimed({ role: r0 });
  assert.is((await a.verb(done.id, 'complete', { result_summary: 'first' })).status, 200);
  const waiting = await a.create({ role: r0 });
  const r = await a.s.api('POST', `/tasks/${done.id}/fail?next=${r0}`, { reason: 'too late' });
  assert.is(r.status, 409);
  assert.is(r.body.code, 'transition_refused');
  assert.match(r.body.detail, /Cannot fail task .* in state 'done'/);
  assert.is((await a.get(waiting.id)).status, 'open', 'nothing was claimed');
  const gone = await a.s.api('POST', `/tasks/01jzzzzzzzzzzzzzzzzzzzzzzz/complete?next=${r0}`, { result_summary: 'x' });
  assert.equal([gone.status, gone.body.code], [404, 'task_not_found']);
});

T('an agent token scoped to its task may finish it but not take a next task', async () => {
  const r0 = role();
  const mine = await a.claimed({ role: r0 });
  const other = await a.create({ role: r0 });
  const { token } = await createToken(sddLayout(a.repo.dir), { role: 'agent', taskId: mine.id }, { now: () => Date.now(), iso: () => new Date().toISOString() });
  const auth = { authorization: `Bearer ${token}` };
  const refused = await a.s.api('POST', `/tasks/${mine.id}/complete?next=${r0}`, { result_summary: 'x' }, auth);
  assert.is(refused.status, 403, JSON.stringify(refused.body));
  assert.is((await a.get(mine.id)).status, 'claimed', 'refused before anything changed');
  assert.is((await a.get(other.id)).status, 'open');
  const ok = await a.s.api('POST', `/tasks/${mine.id}/complete`, { result_summary: 'x' }, auth);
  assert.equal([ok.status, ok.body.status], [200, 'done']);
});

T('svc task complete --next completes and prints the next task claimed', async () => {
  const r0 = role();
  const first = await a.claimed({ role: r0 }, 'cli-worker');
  const second = await a.create({ role: r0, title: title('cli next') });
  const elsewhere = makeTempDir('svc-cycle-cli-');
  try {
    const env = { SERVICE_SERVER_URL: a.s.url, SERVICE_AUTH_TOKEN: a.s.token };
    const r = await runCli(['task', 'complete', first.id, '--summary', 'via cli', '--next', r0, '--json'], { cwd: join(elsewhere.dir), env });
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal([out.completed.id, out.completed.status, out.next.id, out.next.claimed_by_session], [first.id, 'done', second.id, 'cli-worker']);
    const none = await runCli(['task', 'complete', second.id, '--summary', 'last', '--next', r0], { cwd: elsewhere.dir, env });
    assert.is(none.code, 0, none.stderr);
    assert.match(none.stdout, new RegExp(`next: no open task of role '${r0}'`));
  } finally {
    elsewhere.cleanup();
  }
});

T.run();
