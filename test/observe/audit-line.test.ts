// The fast path of the audit walk (a writer-shaped line checked on its bytes) against the parsing walk:
// the same verdict, counts, first broken link and warnings for every log, damaged or not, so a forged
// byte is found wherever it is and existing logs verify as before.
import { createHmac } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import canonicalizeCjs from 'canonicalize';
import { nextRecord, type AuditTail } from '../../src/observe/audit.ts';
import { lineMatch, matchLine } from '../../src/observe/audit-line.ts';
import { summariseSegment, walkSegment } from '../../src/observe/audit-segment.ts';
import { startWalk, walkParsed, type ChainWalk } from '../../src/observe/audit-walk.ts';
import { record, rng, type R } from '../helpers/audit-records.ts';

const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string | undefined;
const KEY = Buffer.from('5f'.repeat(32), 'hex');
const WRONG = Buffer.alloc(32, 7);

const writerLine = (seq: number, details: Record<string, unknown> = { from: 'open', to: 'claimed', version: 2 }, tail: AuditTail = { seq: seq - 1, hmac: '0'.repeat(64) }) =>
  JSON.stringify(nextRecord(KEY, tail, { actor: 'backend-1', action: 'task.claim', resource_type: 'task', resource_id: 't1', details }, '2026-03-01T00:00:00.000Z'));

test('a line in the writer\'s shape is matched; any other shape is left to the parsing walk', () => {
  const m = lineMatch();
  const good = writerLine(7);
  assert.is(matchLine(Buffer.from(good), 0, m), Buffer.byteLength(good));
  assert.is(m.seq, 7);
  for (const details of [{}, { a: [1, -2, 0, true, null, 'x'], b: { c: { d: [] } } }, { title: 'tâche 日本 \u{1F600}' }, { '10': 1, a: 2 }]) {
    const line = writerLine(3, details);
    assert.ok(matchLine(Buffer.from(line), 0, m) > 0, line);
  }
  const refused: [string, string][] = [
    ['a space', good.replace('"seq":7', '"seq": 7')],
    ['an escape', good.replace('backend-1', 'back\\u0065nd-1')],
    ['fields in another order', good.replace(/^\{"seq":7,"ts":("[^"]*")/, '{"ts":$1,"seq":7')],
    ['a fraction', writerLine(3, { n: 1.5 })],
    ['an exponent', good.replace('"version":2', '"version":2e0')],
    ['a leading zero', good.replace('"version":2', '"version":02')],
    ['minus zero', good.replace('"version":2', '"version":-0')],
    ['a 16-digit integer', writerLine(3, { n: 1234567890123456 })],
    ['details keys out of order', good.replace('{"from":"open","to":"claimed"', '{"to":"claimed","from":"open"')],
    ['integer keys that JSON.stringify puts first', writerLine(3, { '10': 1, '9': 2 })],
    ['a duplicate key', good.replace('"from":"open"', '"from":"open","from":"x"')],
    ['a non-ASCII key', writerLine(3, { é: 1 })],
    ['details an array', good.replace(/"details":\{[^}]*\}/, '"details":[1]')],
    ['resource_id a number', good.replace('"resource_id":"t1"', '"resource_id":1')],
    ['a field more', good.replace('"prev":', '"extra":1,"prev":')],
    ['a carriage return', `${good}\r`],
    ['nesting deeper than 32', writerLine(3, JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) as Record<string, unknown>)],
    ['a torn line', good.slice(0, -10)],
  ];
  // A control byte or a backslash at every offset of a string (the scan reads four bytes at a time).
  for (let at = 0; at < 12; at++) {
    for (const c of ['\t', '\u0001', '\u001f', '\\']) {
      refused.push([`${JSON.stringify(c)} at ${at} of a string`, good.replace('"backend-1"', `"${'backend-1-long'.slice(0, at)}${c}${'backend-1-long'.slice(at)}"`)]);
    }
  }
  for (const [why, line] of refused) assert.is(matchLine(Buffer.from(line), 0, m), -1, why);
});

// A chain of generated records, mostly linked and signed as the writer would, then one damage.
function segmentText(r: R, n: number, plain: boolean): string {
  let seq = 0;
  let prev = '0'.repeat(64);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const rec = record(r);
    if (plain || r.next() < 0.5) Object.assign(rec, { actor: `backend-${r.int(99)}`, action: 'task.claim', details: { from: 'open', n: r.int(1e6) - 5e5, to: ['a', 'é', '\u{1F600}'][r.int(3)] } });
    if (plain || r.next() < 0.9) Object.assign(rec, { seq: seq + 1, prev });
    const { hmac: _h, ...rest } = JSON.parse(JSON.stringify(rec)) as Record<string, unknown>;
    const text = typeof rest.prev === 'string' ? canonicalize(rest) : undefined;
    if (text !== undefined && (plain || r.next() < 0.95)) rec.hmac = createHmac('sha256', KEY).update((rest.prev as string) + (r.next() < 0.8 ? text : naive(rec))).digest('hex');
    if (typeof rec.seq === 'number') seq = rec.seq;
    prev = rec.hmac as string;
    lines.push(JSON.stringify(rec));
  }
  return damage(r, lines);
}

// The line's own values in canonical key order, whatever their text: what a fast path that trusted the
// line's text too far would sign. A record signed so (by whoever holds the key) is not valid: the walk refuses it.
function naive(rec: Record<string, unknown>): string {
  const j = JSON.stringify;
  return `{"action":${j(rec.action)},"actor":${j(rec.actor)},"details":${j(rec.details)},"prev":${j(rec.prev)},"resource_id":${j(rec.resource_id)},"resource_type":${j(rec.resource_type)},"seq":${j(rec.seq)},"ts":${j(rec.ts)}}`;
}

function damage(r: R, lines: string[]): string {
  const i = r.int(lines.length);
  const l = lines[i]!;
  switch (r.int(8)) {
    case 0: break;
    case 1: { const at = r.int(l.length); lines[i] = l.slice(0, at) + String.fromCharCode(32 + r.int(95)) + l.slice(at + 1); break; }
    case 2: lines[i] = l.replaceAll('":', '": '); break;
    case 3: lines[i] = l.slice(0, r.int(l.length)); break;
    case 4: lines.splice(i, 0, ''); break;
    case 5: lines[i] = `${l}\r`; break;
    case 6: lines.splice(i, 1); break;
    default: { const at = r.int(l.length); lines[i] = l.slice(0, at) + String.fromCharCode(r.int(0x3000)) + l.slice(at + 1); }
  }
  return lines.join('\n') + (r.next() < 0.9 ? '\n' : '');
}

// Both walks over the same segments in order; `bytes` may hold invalid UTF-8 (then every line is parsed).
function bothWalks(key: Uint8Array | null, segments: Buffer[]): [ChainWalk, ChainWalk] {
  const fast = startWalk();
  const parsed = startWalk();
  segments.forEach((b, i) => {
    walkSegment(key, fast, `s${i}`, b);
    walkParsed(key, parsed, `s${i}`, b.toString('utf8'));
  });
  return [fast, parsed];
}

test('the walk on bytes gives what the parsing walk gives, on 1,500 generated logs with and without damage', () => {
  const r = rng(2026);
  let matched = 0;
  let lines = 0;
  for (let i = 0; i < 1_500; i++) {
    const segments = [segmentText(r, 1 + r.int(12), false), segmentText(r, 1 + r.int(12), r.next() < 0.5)].map((t) => Buffer.from(t, 'utf8'));
    // Sometimes a byte that is not UTF-8 at all.
    if (r.next() < 0.05 && segments[1]!.length > 0) segments[1]![r.int(segments[1]!.length)] = 0x80 + r.int(0x80);
    for (const key of [KEY, null, WRONG]) {
      const [fast, parsed] = bothWalks(key, segments);
      assert.equal(fast, parsed, `log ${i}, key ${key === null ? 'none' : key === KEY ? 'right' : 'wrong'}`);
    }
    const m = lineMatch();
    for (const b of segments) {
      for (let p = 0; p < b.length; lines++) {
        const end = matchLine(b, p, m);
        if (end >= 0) matched++;
        const nl = b.indexOf(0x0a, p);
        p = nl < 0 ? b.length : nl + 1;
      }
    }
  }
  assert.ok(matched > lines / 3, `the fast path matched ${matched} of ${lines} lines`);
});

test('one byte changed anywhere in a long writer-shaped segment is found at its line', () => {
  const r = rng(7);
  let tail: AuditTail = { seq: 0, hmac: '0'.repeat(64) };
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    const rec = nextRecord(KEY, tail, { actor: 'op', action: 'task.update', resource_type: 'task', resource_id: `t${i}`, details: { n: i, title: `tâche ${i}` } }, `2026-03-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`);
    tail = rec;
    lines.push(JSON.stringify(rec));
  }
  for (let k = 0; k < 200; k++) {
    // Not the last line: an unreadable last line is a torn write, a warning by design.
    const i = r.int(lines.length - 1);
    const at = r.int(lines[i]!.length);
    const was = lines[i]!;
    const ch = String.fromCharCode(33 + r.int(90));
    if (was[at] === ch) continue;
    const forged = [...lines];
    forged[i] = was.slice(0, at) + ch + was.slice(at + 1);
    const [fast, parsed] = bothWalks(KEY, [Buffer.from(`${forged.join('\n')}\n`)]);
    assert.equal(fast, parsed);
    assert.ok(fast.broken !== undefined, `line ${i + 1} byte ${at}: ${forged[i]}`);
    assert.equal([fast.broken!.line, fast.records], [i + 1, i], `line ${i + 1}: ${forged[i]}`);
  }
});

test('records of every size verify, 20 KB of details included, and a forged one among them is found', () => {
  let tail: AuditTail = { seq: 0, hmac: '0'.repeat(64) };
  const lines: string[] = [];
  for (const size of [0, 100, 7_900, 8_200, 20_000, 10]) {
    const rec = nextRecord(KEY, tail, { actor: 'op', action: 'task.update', resource_type: 'task', resource_id: null, details: { text: 'x'.repeat(size) } }, '2026-03-01T00:00:00.000Z');
    tail = rec;
    lines.push(JSON.stringify(rec));
  }
  const [fast, parsed] = bothWalks(KEY, [Buffer.from(`${lines.join('\n')}\n`)]);
  assert.equal(fast, parsed);
  assert.equal([fast.broken, fast.records], [undefined, 6]);
  lines[4] = lines[4]!.replace('xxx', 'xyx');
  const [forged] = bothWalks(KEY, [Buffer.from(`${lines.join('\n')}\n`)]);
  assert.equal([forged.broken?.line, forged.broken?.reason], [5, 'hmac mismatch']);
});

test('a segment whose first record links to a prev of kilobytes is summarised right (its signed text is longer than the scratch area)', () => {
  let tail: AuditTail = { seq: 41, hmac: 'p'.repeat(4_100) };
  const lines: string[] = [];
  for (const size of [10, 3_000, 10]) {
    const rec = nextRecord(KEY, tail, { actor: 'op', action: 'task.update', resource_type: 'task', resource_id: 't1', details: { text: 'y'.repeat(size) } }, '2026-03-01T00:00:00.000Z');
    tail = rec;
    lines.push(JSON.stringify(rec));
  }
  const text = `${lines.join('\n')}\n`;
  const want = { records: 3, firstSeq: 42, firstPrev: 'p'.repeat(4_100), lastSeq: 44, lastHmac: tail.hmac };
  assert.equal(summariseSegment(KEY, Buffer.from(text)), want);
  assert.equal(summariseSegment(KEY, text), want);
});

test('a number JSON.parse reads as Infinity is a broken link (hmac mismatch), not a crash of the walk', () => {
  const first = writerLine(1);
  const lines = [first, writerLine(2, undefined, JSON.parse(first) as AuditTail).replace('"version":2', '"version":1e999')];
  const [fast, parsed] = bothWalks(KEY, [Buffer.from(`${lines.join('\n')}\n`)]);
  assert.equal(fast, parsed);
  assert.equal([fast.broken?.line, fast.broken?.reason], [2, 'hmac mismatch']);
});

test.run();
