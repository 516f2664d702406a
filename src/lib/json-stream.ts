// Large JSON answers written piece by piece: memory per client stays at one piece plus the socket's buffer.
import type { ServerResponse } from 'node:http';
import { nextTurn } from './timers.ts';

const FLUSH_AT = 64 * 1024;
/** A client that takes nothing of its answer for this long is disconnected. */
export const STALLED_CLIENT_MS = 30_000;

// Resolves when the socket can take more, or when the client has gone (then nothing more is written).
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); res.off('drain', done); res.off('close', done); resolve(); };
    const timer = setTimeout(() => { res.destroy(); done(); }, STALLED_CLIENT_MS);
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Send `parts` (produced lazily, in order) as one JSON body: small text parts are gathered into 64 KiB
 * pieces, large ones (cached Buffers) written as they are; when the socket is full the next piece waits
 * for the client, and the event loop is yielded to between pieces, so neither a slow nor a greedy client
 * holds memory or stalls other requests. Stops when the client leaves.
 */
export async function streamJson(res: ServerResponse, status: number, headers: Record<string, string>, parts: Iterable<string | Buffer> | AsyncIterable<string | Buffer>): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  let text = '';
  const write = async (piece: string | Buffer) => {
    if (res.destroyed) return;
    if (!res.write(piece)) await drained(res);
    else await nextTurn();
  };
  for await (const p of parts) {
    if (res.destroyed) return;
    if (typeof p === 'string') {
      text += p;
      if (text.length >= FLUSH_AT) { await write(text); text = ''; }
      continue;
    }
    if (text) { res.write(text); text = ''; }
    await write(p);
  }
  if (!res.destroyed) res.end(text);
}

/** A JSON array of already serialised items, one item at a time (pure generator). */
export function* jsonArray<T extends string | Buffer>(texts: Iterable<T>): Generator<string | T> {
  yield '[';
  let first = true;
  for (const t of texts) {
    if (!first) yield ',';
    yield t;
    first = false;
  }
  yield ']';
}

/**
 * The JSON of `items`, first to last, while their total stays within `budget` bytes (at least one item),
 * yielding to the event loop after each MiB serialised so a large list never blocks other requests.
 */
export async function withinBudget<T>(items: Iterable<T>, budget: number, toJson: (item: T) => Buffer): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let bytes = 0;
  let sinceYield = 0;
  for (const item of items) {
    const b = toJson(item);
    if (out.length > 0 && bytes + b.length > budget) break;
    out.push(b);
    bytes += b.length;
    sinceYield += b.length;
    if (sinceYield > 1 << 20) { sinceYield = 0; await nextTurn(); }
  }
  return out;
}
