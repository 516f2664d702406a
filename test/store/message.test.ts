import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commitMessage, recoverMessage } from '../../src/store/message.ts';

const message = suite('store commit messages');

message('notes are joined in order, repeats named once, whitespace flattened', () => {
  assert.is(commitMessage(['claim a by x', 'complete b', 'claim a by x', ' multi\nline '], 3), 'claim a by x; complete b; multi line');
});

message('without notes the message counts the paths', () => {
  assert.is(commitMessage([], 1), 'update 1 path');
  assert.is(commitMessage(['', '  '], 12), 'update 12 paths');
});

message('more than 20 notes are cut with a count of the rest', () => {
  const notes = Array.from({ length: 23 }, (_, i) => `n${i}`);
  assert.is(commitMessage(notes, 23), `${notes.slice(0, 20).join('; ')}; … and 3 more`);
  assert.is(commitMessage(notes.slice(0, 20), 20), notes.slice(0, 20).join('; '));
});

message('recover names the first ten paths', () => {
  assert.is(recoverMessage(['a']), 'recover: 1 path (a)');
  const many = Array.from({ length: 12 }, (_, i) => `p${i}`);
  assert.is(recoverMessage(many), `recover: 12 paths (${many.slice(0, 10).join(', ')}, …)`);
});

message.run();
