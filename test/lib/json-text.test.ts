import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonText, keepJsonText } from '../../src/lib/json-text.ts';
import { casStep } from '../../src/store/records/cas.ts';

const T = suite('json text kept with a record');

type Rec = { id: string; version: number; status: string; tags: string[] };

T('a changed record answers with the compact JSON its compare-and-set wrote, and its next version does not inherit it', () => {
  const cur: Rec = { id: 't1', version: 3, status: 'open', tags: [] };
  const { next, record } = casStep<Rec>('/x/t1.json', cur, (c) => ({ ...c, status: 'claimed' }));
  assert.is(jsonText(next), record.json, 'the text the journal carries');
  assert.equal(JSON.parse(jsonText(next)), { id: 't1', version: 4, status: 'claimed', tags: [] });
  assert.equal(cur, { id: 't1', version: 3, status: 'open', tags: [] }, 'the current record is untouched');
  const after = casStep<Rec>('/x/t1.json', next, (c) => ({ ...c, status: 'done' })).next;
  assert.equal(JSON.parse(jsonText(after)), { id: 't1', version: 5, status: 'done', tags: [] }, 'the spread copy has its own text');
  assert.equal(Object.keys({ ...next }), ['id', 'version', 'status', 'tags'], 'the text is no enumerable member');
  assert.is(JSON.stringify(next), '{"id":"t1","version":4,"status":"claimed","tags":[]}', 'the native writer sees the record alone');
});

T('a mutate that gives the current record back still leaves it as it was', () => {
  const cur: Rec = { id: 't2', version: 1, status: 'open', tags: [] };
  const { next } = casStep<Rec>('/x/t2.json', cur, (c) => c);
  assert.is(cur.version, 1);
  assert.is(next.version, 2);
  assert.is.not(next, cur);
});

T('a plain object of kept texts and primitives is put together; anything else goes to JSON.stringify', () => {
  const a = keepJsonText({ b: 1, a: 2 }, '{"a":2,"b":1}');
  assert.is(jsonText({ completed: a, next: null, n: 3, s: 'x"y', ok: true }), '{"completed":{"a":2,"b":1},"next":null,"n":3,"s":"x\\"y","ok":true}');
  assert.is(jsonText({ completed: a, more: { c: 1 } }), JSON.stringify({ completed: { b: 1, a: 2 }, more: { c: 1 } }), 'a member without a text');
  assert.is(jsonText({ completed: a, gone: undefined }), '{"completed":{"b":1,"a":2}}', 'undefined members follow the native rules');
  assert.is(jsonText({ x: 1 }), '{"x":1}');
  assert.is(jsonText([a]), '[{"b":1,"a":2}]');
  assert.is(jsonText('s'), '"s"');
  assert.is(jsonText(null), 'null');
});

T('under SVC_CHECK_JSON_TEXT a record changed in place after its write fails loudly', async () => {
  const prev = process.env.SVC_CHECK_JSON_TEXT;
  process.env.SVC_CHECK_JSON_TEXT = '1';
  try {
    const { jsonText: checkedText, keepJsonText: keep } = await import(`../../src/lib/json-text.ts?check=${Date.now()}`);
    const r = keep({ a: 1 }, '{"a":1}');
    assert.is(checkedText(r), '{"a":1}');
    r.a = 2;
    assert.throws(() => checkedText(r), /no longer matches/);
  } finally {
    if (prev === undefined) delete process.env.SVC_CHECK_JSON_TEXT;
    else process.env.SVC_CHECK_JSON_TEXT = prev;
  }
});

T.run();
