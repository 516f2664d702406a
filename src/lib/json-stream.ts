// Large JSON answers written piece by piece: memory per client stays at one piece plus the socket's buffer.
import type { ServerResponse } from 'node:http';

const FLUSH_AT = 64 * 1024;

// Resolves when the socket can take more, or when the client has gone (then nothing more is written).
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Send `parts` (produced lazily, in order) as one JSON body: written in 64 KiB pieces, waiting for the
 * client to take each one when the socket is full, and yielding to the event loop between pieces, so
 * neither a slow nor a greedy client holds memory or stalls other requests. Stops when the client leaves.
 */
export async function streamJson(res: ServerResponse, status: number, headers: Record<string, string>, parts: Iterable<string> | AsyncIterable<string>): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  let buf = '';
  for await (const p of parts) {
    if (res.destroyed) return;
    buf += p;
    if (buf.length < FLUSH_AT) continue;
    const more = res.write(buf);
    buf = '';
    if (!more) await drained(res);
    else await new Promise((r) => setImmediate(r));
  }
  if (!res.destroyed) res.end(buf);
}

/** The JSON text of `items` as an array, one item at a time (pure generator). */
export function* jsonArray(items: Iterable<unknown>): Generator<string> {
  yield '[';
  let first = true;
  for (const item of items) {
    yield (first ? '' : ',') + JSON.stringify(item);
    first = false;
  }
  yield ']';
}

/** The JSON texts of `items`, first to last, while their total stays within `budget` bytes (at least one item); pure. */
export function withinBudget(items: Iterable<unknown>, budget: number): { texts: string[]; bytes: number } {
  const texts: string[] = [];
  let bytes = 0;
  for (const item of items) {
    const t = JSON.stringify(item);
    const n = Buffer.byteLength(t);
    if (texts.length > 0 && bytes + n > budget) break;
    texts.push(t);
    bytes += n;
  }
  return { texts, bytes };
}
