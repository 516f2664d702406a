// The fast-import stream of a state commit, read as plain values: what each path becomes, and the answer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileContent, importStream, parseImportOutput, release, STREAM_FROM, type Content } from '../../src/store/fast-import.ts';

const T = suite('state commit stream');

const collect = async (it: AsyncIterable<Uint8Array>) => { const parts: Buffer[] = []; for await (const p of it) parts.push(Buffer.from(p)); return Buffer.concat(parts).toString('utf8'); };

T('each path becomes an inline blob, a known blob, or a delete; a path with no content is left out', async () => {
  const contents: Record<string, Content | null> = {
    '.sdd/a.json': { kind: 'bytes', data: Buffer.from('{"a":1}') }, '.sdd/b.json': { kind: 'blob', oid: 'b'.repeat(40) },
    '.sdd/c.json': { kind: 'deleted' }, '.sdd/dir': null,
  };
  const text = await collect(importStream({ ref: 'refs/x', parent: 'p'.repeat(40), message: 'two changes', timestampMs: 5000, paths: Object.keys(contents), content: (p) => contents[p]! }));
  assert.match(text, /^commit refs\/x\nmark :1\ncommitter svc <svc@localhost> 5 \+0000\ndata 12\ntwo changes\n\n/);
  assert.match(text, `from ${'p'.repeat(40)}\nM 100644 inline .sdd/a.json\ndata 7\n{"a":1}\nM 100644 ${'b'.repeat(40)} .sdd/b.json\nD .sdd/c.json\n\nget-mark :1\nls :1 .sdd\nls ${'p'.repeat(40)} .sdd\n`);
  assert.match(text, /\ncheckpoint\nprogress svc: committed\n$/, 'ends with the pack on disk, then a line saying so');
  assert.not.match(text, '.sdd/dir');
});

T('the answer: the commit, and whether its tree differs from the parent\'s', () => {
  const c = 'c'.repeat(40);
  assert.equal(parseImportOutput(`${c}\n040000 tree ${'1'.repeat(40)}\t.sdd\n040000 tree ${'1'.repeat(40)}\t.sdd\n`, true), { oid: c, changed: false });
  assert.equal(parseImportOutput(`${c}\n040000 tree ${'1'.repeat(40)}\t.sdd\n040000 tree ${'2'.repeat(40)}\t.sdd\n`, true), { oid: c, changed: true });
  assert.equal(parseImportOutput(`${c}\nmissing .sdd\n`, false), { oid: c, changed: false }, 'a first commit with nothing in it');
  assert.throws(() => parseImportOutput('fatal: bad\n', true), /no commit id/);
});

T('a large append-only file is streamed from its descriptor; a record file is read whole; a missing one is a delete', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fi-'));
  try {
    writeFileSync(join(dir, 'big.jsonl'), 'x'.repeat(STREAM_FROM));
    writeFileSync(join(dir, 'big.json'), 'y'.repeat(STREAM_FROM));
    const big = fileContent(join(dir, 'big.jsonl'));
    assert.equal([big?.kind, big?.kind === 'file' && big.size], ['file', STREAM_FROM]);
    release(big);
    assert.is(fileContent(join(dir, 'big.json'))?.kind, 'bytes');
    assert.is(fileContent(join(dir, 'gone.json'))?.kind, 'deleted');
    assert.is(fileContent(dir), null, 'a folder is no file');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

T.run();
