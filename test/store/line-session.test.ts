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
  let made = 0;
  async function* stream() { for (let i = 0; i < chunks; i++) { made++; yield Buffer.alloc(size, 97); } }
  // Counts turns of the event loop (a request's callbacks run in the same turns) while the stream is fed.
  let turns = 0, ticking = true;
  const tick = () => { if (!ticking) return; turns++; setImmediate(tick); };
  setImmediate(tick);
  try {
    const lines = await s.ask(stream(), 1);
    ticking = false;
    assert.equal(lines, [String(chunks * size)], 'every byte reached the process');
    assert.is(made, chunks);
    // Without a turn per chunk, the pipe takes the first ~64 KiB at once and the loop waits behind them.
    assert.ok(turns >= chunks - 5, `${turns} turns of the event loop for ${chunks} chunks`);
  } finally {
    ticking = false;
    await s.close();
  }
});

T.run();
