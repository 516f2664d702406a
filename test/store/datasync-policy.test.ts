import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DatasyncPolicy } from '../../src/store/datasync-policy.ts';

const T = suite('where an append log datasyncs a batch');

T('on a fast disk every batch is datasynced on the event loop, however large', () => {
  const p = new DatasyncPolicy();
  for (let i = 0; i < 100; i++) p.took(150);
  assert.ok([1, 2, 3, 30, 500].every((n) => p.inline(n)));
  assert.is(p.typicalUs, 150);
});

T('one stall is no slow disk, nor are stalls in a few per cent of datasyncs', () => {
  const p = new DatasyncPolicy();
  for (let i = 0; i < 50; i++) p.took(150);
  p.took(12_000);
  assert.ok(p.inline(30), 'a 12 ms datasync among fast ones keeps the batches inline');
  // What a shared disk did at W = 32: p50 ~300 µs, a few in a hundred 3-7 ms, one 23 ms. With a mean, that one
  // stall sent the next ~300 batches to the pool (only every 32nd was timed again, and each moved it 5%).
  for (let i = 0; i < 100; i++) p.took(i % 25 === 0 ? 6_000 : 300);
  p.took(23_000);
  let pooled = 0;
  for (let b = 0; b < 320; b++) if (p.inline(15)) p.took(300); else pooled++;
  assert.is(pooled, 0, `after a 23 ms stall every batch stays inline (typical ${p.typicalUs} µs)`);
});

T('on a slow disk a batch of several clients goes to the thread pool, with an inline probe every 32nd; one or two stay inline', () => {
  const p = new DatasyncPolicy();
  for (let i = 0; i < 100; i++) p.took(5000);
  assert.ok(p.inline(1) && p.inline(2), 'one client (or a fused complete-and-claim) waits either way');
  const choices = Array.from({ length: 64 }, () => p.inline(10));
  assert.is(choices.filter(Boolean).length, 2, 'two probes in 64 batches');
  assert.is(choices.indexOf(true), 31);
});

T('a disk that recovers is noticed through the probes', () => {
  const p = new DatasyncPolicy();
  for (let i = 0; i < 100; i++) p.took(5000);
  let probes = 0;
  for (let b = 0; b < 10_000 && p.typicalUs >= 1000; b++) if (p.inline(10)) { p.took(150); probes++; } // each probe inline, and fast again
  assert.ok(p.typicalUs < 1000, 'back under the threshold');
  assert.ok(probes > 0 && probes < 100, `${probes} probes`);
  for (let i = 0; i < 10; i++) assert.ok(p.inline(10), 'every batch inline again');
});

T('a slow first datasync (a cold file) does not send the next batches to the thread pool', () => {
  const p = new DatasyncPolicy();
  p.took(25_000);
  for (let i = 0; i < 30; i++) p.took(150);
  assert.ok(p.typicalUs < 1000, `${p.typicalUs.toFixed(0)} µs`);
  assert.ok(p.inline(30));
});

T.run();
