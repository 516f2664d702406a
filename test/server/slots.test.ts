// Large reads run a few at a time per client: the others wait their turn, in order, and a freed slot passes on.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyedSlots } from '../../src/lib/slots.ts';

const S = suite('keyed slots');

S('at most N holders per key; waiters get freed slots in arrival order; other keys are independent', async () => {
  const slots = new KeyedSlots(2);
  const a = await slots.acquire('viewer');
  const b = await slots.acquire('viewer');
  const order: string[] = [];
  const c = slots.acquire('viewer').then((free) => { order.push('c'); return free; });
  const d = slots.acquire('viewer').then((free) => { order.push('d'); return free; });
  const other = await slots.acquire('someone else');
  await new Promise((r) => setImmediate(r));
  assert.equal(order, [], 'both wait while two slots are held');
  assert.is(slots.holders('viewer'), 2);
  a();
  a();
  const freeC = await c;
  assert.equal(order, ['c'], 'a double free passes on one slot only');
  b();
  (await d)();
  freeC();
  other();
  assert.is(slots.holders('viewer'), 0);
  assert.is(slots.holders('someone else'), 0);
});

S.run();
