// The publisher's thread: writes record files behind the journal with synchronous calls, so the
// kernel's file work (a creation costs 0.2–1 ms here) never holds the server's event loop.
import { parentPort } from 'node:worker_threads';
import { writeBehindSync } from './atomic.ts';

/** A batch of files: `[abs, text]`, text null for a delete. */
export interface PublishRequest { id: number; files: [string, string | null][] }
/** Per file: null when written, else the error's code and message. */
export interface PublishReply { id: number; results: ({ code?: string; message: string } | null)[] }

parentPort?.on('message', (req: PublishRequest) => {
  const results = req.files.map(([abs, text]) => {
    try {
      writeBehindSync(abs, text);
      return null;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return { code: e.code, message: e.message };
    }
  });
  parentPort!.postMessage({ id: req.id, results } satisfies PublishReply);
});
