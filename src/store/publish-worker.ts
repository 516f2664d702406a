// The publisher's thread: writes record files with synchronous calls (temp + rename), so their
// file creations and renames (0.2–1 ms each in the kernel here) never hold the server's event loop.
import { mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { tempPathFor } from './io.ts';

/** A batch of files: `[abs, text]`, text null for a delete. */
export interface PublishRequest { id: number; files: [string, string | null][] }
/** Per file: null when written, else the error's code and message. */
export interface PublishReply { id: number; results: ({ code?: string; message: string } | null)[] }

function writeOne(abs: string, text: string | null): void {
  if (text === null) {
    try {
      unlinkSync(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return;
  }
  const tmp = tempPathFor(abs);
  try {
    try {
      writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
    }
    renameSync(tmp, abs);
  } catch (err) {
    try { unlinkSync(tmp); } catch { /* never created, or renamed */ }
    throw err;
  }
}

parentPort?.on('message', (req: PublishRequest) => {
  const results = req.files.map(([abs, text]) => {
    try {
      writeOne(abs, text);
      return null;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return { code: e.code, message: e.message };
    }
  });
  parentPort!.postMessage({ id: req.id, results } satisfies PublishReply);
});
