// What a node may push, decided from the command list of a receive-pack request, and the refusal git prints.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { judgePush, readCommandSection, refusalReport } from '../../src/repo/index.ts';

const G = suite('push gate');
const A = 'a'.repeat(40), B = 'b'.repeat(40), Z = '0'.repeat(40);
const pkt = (s: string) => (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s;
const request = (lines: string[], caps = 'report-status side-band-64k agent=git/2.39') =>
  Buffer.from(lines.map((l, i) => pkt(i === 0 ? `${l}\0${caps}\n` : `${l}\n`)).join('') + '0000PACK....');

G('the command list is read up to its flush; the pack begins right after', () => {
  const buf = request([`${A} ${B} refs/heads/agent/backend-1a2b3c4d`, `${Z} ${B} refs/heads/agent/qa-00000000`]);
  const s = readCommandSection(buf);
  assert.is(s.kind, 'ok');
  if (s.kind !== 'ok') return;
  assert.equal(s.commands.map((c) => c.ref), ['refs/heads/agent/backend-1a2b3c4d', 'refs/heads/agent/qa-00000000']);
  assert.equal(s.capabilities, ['report-status', 'side-band-64k', 'agent=git/2.39']);
  assert.is(buf.subarray(s.length).toString(), 'PACK....');
  // Bytes cut anywhere before the flush: more must be read; garbage is refused.
  for (let n = 0; n < s.length; n += 7) assert.is(readCommandSection(buf.subarray(0, n)).kind, 'incomplete');
  assert.is(readCommandSection(Buffer.from('zzzz')).kind, 'invalid');
  assert.is(readCommandSection(Buffer.from('0000')).kind, 'invalid');
  assert.is(readCommandSection(Buffer.from(pkt('hello there\n') + '0000')).kind, 'invalid');
});

G('only agent branches of held sessions, never a delete, and all or nothing', () => {
  const held = new Set(['backend-1a2b3c4d']);
  const cmd = (ref: string, newId = B) => ({ oldId: A, newId, ref });
  assert.is(judgePush([cmd('refs/heads/agent/backend-1a2b3c4d')], held), null);
  for (const ref of ['refs/heads/main', 'refs/heads/agent/qa-00000000', 'refs/heads/agent/backend-1a2b3c4d/x', 'refs/sdd/state', 'refs/tags/v1', 'refs/heads/agent/Backend-1A2B3C4D', 'refs/heads/agent/../main']) {
    const why = judgePush([cmd(ref)], held);
    assert.ok(why?.get(ref), ref);
  }
  assert.match(judgePush([cmd('refs/heads/agent/backend-1a2b3c4d', Z)], held)!.get('refs/heads/agent/backend-1a2b3c4d')!, 'deleting');
  const mixed = judgePush([cmd('refs/heads/agent/backend-1a2b3c4d'), cmd('refs/heads/main')], held)!;
  assert.match(mixed.get('refs/heads/agent/backend-1a2b3c4d')!, 'another ref');
  assert.match(mixed.get('refs/heads/main')!, 'only refs/heads/agent/');
});

G('the refusal is a report-status git reads, in side-band 1 when asked', () => {
  const why = new Map([['refs/heads/main', 'only agent branches']]);
  assert.is(refusalReport(why, ['report-status']).toString(), `${pkt('unpack ok\n')}${pkt('ng refs/heads/main only agent branches\n')}0000`);
  const banded = refusalReport(why, ['report-status', 'side-band-64k']).toString();
  const inner = `${pkt('unpack ok\n')}${pkt('ng refs/heads/main only agent branches\n')}0000`;
  assert.is(banded, `${pkt(`\u0001${inner}`)}0000`);
});

G.run();
