import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commitMessage, recoverMessage, startMessage } from '../../src/store/message.ts';
import type { StartReport } from '../../src/store/types.ts';

const message = suite('store commit messages');

message('notes are joined in order after a count, repeats named once, whitespace flattened', () => {
  assert.is(commitMessage(['claim a by x', 'complete b', 'claim a by x', ' multi\nline '], 3), '3 changes: claim a by x; complete b; multi line');
  assert.is(commitMessage(['claim a by x'], 1), 'claim a by x', 'one change: no count');
});

message('changes name the task title and id; each distinct actor gets a Svc-Actor trailer', () => {
  const msg = commitMessage([
    { action: 'create', id: '01m8a', title: 'Add a health check', actor: 'alice' },
    { action: 'claim', id: '01m8b', title: 'Fix login', actor: 'tok_1', detail: 'by backend-3f2a' },
    { action: 'claim', id: '01m8c', title: 'Docs', actor: 'alice' },
  ], 3);
  assert.is(msg, '3 changes: create "Add a health check" (01m8a); claim "Fix login" (01m8b) by backend-3f2a; claim "Docs" (01m8c)\n\nSvc-Actor: alice\nSvc-Actor: tok_1');
});

message('titles are one line: control characters escaped, quotes escaped, cut at 60 characters', () => {
  const msg = commitMessage([{ action: 'create', id: 'x1', title: 'evil\ntitle\u001b[31m "quoted" \\ end' }], 1);
  assert.is(msg, 'create "evil title\\u001b[31m \\"quoted\\" \\\\ end" (x1)');
  const long = commitMessage([{ action: 'create', id: 'x2', title: 'é'.repeat(100) }], 1);
  assert.is(long, `create "${'é'.repeat(59)}…" (x2)`);
  const actor = commitMessage([{ action: 'patch', id: 'x3', actor: 'a\nSvc-Actor: forged' }], 1);
  assert.is(actor.split('\n').filter((l) => l.startsWith('Svc-Actor:')).length, 1, 'a newline in an actor cannot forge a trailer');
});

message('progress-only changes are grouped', () => {
  const notes = [
    { action: 'claim', id: 'a', title: 'A', actor: 'w' },
    ...Array.from({ length: 24 }, () => ({ action: 'progress', id: 'a', title: 'A', actor: 'w' })),
    { action: 'complete', id: 'a', title: 'A', actor: 'w' },
  ];
  assert.is(commitMessage(notes, 3), '26 changes: claim "A" (a); progress ×24; complete "A" (a)\n\nSvc-Actor: w');
  assert.is(commitMessage([{ action: 'progress', id: 'a', title: 'A' }], 1), 'progress "A" (a)', 'a single progress is named');
});

message('without notes the message counts the paths', () => {
  assert.is(commitMessage([], 1), 'update 1 path');
  assert.is(commitMessage(['', '  '], 12), 'update 12 paths');
});

message('more than 20 changes are cut with a count of the rest, listed in the body', () => {
  const notes = Array.from({ length: 23 }, (_, i) => `n${i}`);
  assert.is(commitMessage(notes, 23), `23 changes: ${notes.slice(0, 20).join('; ')}; … and 3 more\n\nn20\nn21\nn22`);
  assert.is(commitMessage(notes.slice(0, 20), 20), `20 changes: ${notes.slice(0, 20).join('; ')}`);
});

const report = (r: Partial<StartReport>): StartReport => ({ first: false, committed: [], deleted: [], restoredTasks: 0, restoredOther: 0, fetched: false, ...r });

message('recover messages count what was restored, committed and deleted, naming the first ten paths', () => {
  assert.is(recoverMessage(report({ committed: ['a'] })), 'recover: committed 1 (a)');
  const many = Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, '0')}`);
  assert.is(recoverMessage(report({ committed: many, restoredTasks: 8 })), `recover: restored 8, committed 12 (${many.slice(0, 10).join(', ')}, …)`);
  assert.is(recoverMessage(report({ committed: ['b'], deleted: ['a'] })), 'recover: committed 1, deleted 1 (a, b)');
  assert.is(recoverMessage(report({ first: true, committed: ['a', 'b'] })), 'first commit of the board (2 paths)');
});

message('the start line says in words what happened', () => {
  assert.is(startMessage(report({ restoredTasks: 8, fetched: true, committed: ['tenants.json'] })), 'state: restored 8 task files from refs/sdd/state (fetched board); committed 1 changed path');
  assert.is(startMessage(report({ restoredTasks: 1, restoredOther: 2 })), 'state: restored 1 task file and 2 other files from refs/sdd/state (missing on disk)');
  assert.is(startMessage(report({ restoredOther: 1 })), 'state: restored 1 file from refs/sdd/state (missing on disk)');
  assert.is(startMessage(report({ first: true, committed: ['config.yaml', 'x'] })), 'state: first commit of the board (2 files)');
  assert.is(startMessage(report({ committed: ['a', 'b'], deleted: ['c'] })), 'state: committed 2 changed paths; committed 1 journaled deletion');
  assert.is(startMessage(report({})), 'state: the files match refs/sdd/state');
});

message.run();
