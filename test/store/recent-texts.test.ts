import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recentTexts } from '../../src/store/recent-texts.ts';

const rt = suite('store recent texts');

rt('keeps the newest text per path, forgets a deleted one, and drops the least recently written beyond its size', () => {
  const r = recentTexts(2);
  r.set('/a', 'a1');
  r.set('/b', 'b1');
  r.set('/a', 'a2'); // written again: now the newest
  r.set('/c', 'c1'); // over the size: /b, the oldest write, goes
  assert.is(r.get('/a'), 'a2');
  assert.is(r.get('/b'), undefined);
  assert.is(r.get('/c'), 'c1');
  r.set('/c', null);
  assert.is(r.get('/c'), undefined, 'a delete is not answered from memory');
});

rt.run();
