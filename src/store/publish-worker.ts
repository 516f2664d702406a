// The publisher's thread: writes record files behind the journal with synchronous calls, so the
// kernel's file work (a creation costs 0.2–1 ms here) never holds the server's event loop; at start it
// also reads whole folders while the event loop parses what it read before.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { writeBehindSync } from './atomic.ts';
import { renderRecord } from './records/cas.ts';

/** Files to write (`[abs, text]`, text null for a delete), or a folder to read. */
export type PublishRequest = { id: number; files: [string, string | { json: string } | null][] } | { id: number; folder: string };
/** Per file: null when written, else the error's code and message; or a folder's `*.json` texts by name. */
export type PublishReply = { id: number; results: ({ code?: string; message: string } | null)[] } | { id: number; texts: [string, string][] };

// One options object for every read: with the string 'utf8' readFileSync builds one per call, a fifth of
// the CPU of reading 100k small files here.
const UTF8 = { encoding: 'utf8', flag: 'r' } as const;

// A folder of a tree this process owns: temp files and lock folders in it were left by a dead writer.
function readFolder(dir: string): [string, string][] {
  const out: [string, string][] = [];
  let names: string[];
  try { names = readdirSync(dir); } catch { return out; }
  for (const name of names) {
    if (name.endsWith('.tmp') || name.endsWith('.lock')) rmSync(join(dir, name), { recursive: true, force: true });
    else if (name.endsWith('.json')) {
      // A template, not join(): `dir` is already normal and `name` a bare name; join costs ~1 µs, 0.1 s per 100k files.
      try { out.push([name, readFileSync(`${dir}/${name}`, UTF8)]); } catch { /* gone meanwhile */ }
    }
  }
  return out;
}

parentPort?.on('message', (req: PublishRequest) => {
  if ('folder' in req) { parentPort!.postMessage({ id: req.id, texts: readFolder(req.folder) } satisfies PublishReply); return; }
  const results = req.files.map(([abs, text]) => {
    try {
      writeBehindSync(abs, text !== null && typeof text === 'object' ? renderRecord(text.json) : text);
      return null;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return { code: e.code, message: e.message };
    }
  });
  parentPort!.postMessage({ id: req.id, results } satisfies PublishReply);
});
