// A long-lived helper process fed a long stream (a state commit through git fast-import): the event loop
// gets a turn between chunks, so requests are answered while a commit of thousands of records is written.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lineSession } from '../../src/store/line-session.ts';

const T = suite('line session');

// Reads stdin and answers one line with the byte count once `total` bytes arrived.
const counter = (total: number) => lineSession(process.execPath, ['-e', `let n = 0; process.stdin.on('data', (d) => { n += d.length; if (n >= ${total}) { console.log(n); n = 0; } });`]);

T('a stream of chunks arrives whole, and the event loop turns between its chunks', async () => {
  const chunks = 300, size = 1024;
  const s = counter(chunks * size);
  // Counts turns of the event loop (a request's callbacks run in such turns); each chunk notes the count when made.
  let turns = 0, ticking = true;
  const tick = () => { if (!ticking) return; turns++; setImmediate(tick); };
  setImmediate(tick);
  const madeAt: number[] = [];
  async function* stream() { for (let i = 0; i < chunks; i++) { madeAt.push(turns); yield Buffer.alloc(size, 97); } }
  try {
    const lines = await s.ask(stream(), 1);
    assert.equal(lines, [String(chunks * size)], 'every byte reached the process');
    assert.is(madeAt.length, chunks);
    // The most chunks made within one turn: without a turn per chunk, the pipe (64 KiB) and the stream's
    // buffer took the first ~80 at once while every request waited.
    const perTurn = new Map<number, number>();
    for (const t of madeAt) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    const most = Math.max(...perTurn.values());
    assert.ok(most <= 2, `${most} chunks were made in one turn of the event loop`);
  } finally {
    ticking = false;
    await s.close();
  }
});

T.run();
