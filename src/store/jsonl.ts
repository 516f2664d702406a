// Readers of JSONL files: whole lines only, a torn last line (a crash mid-append) skipped.
import { open, readFile } from 'node:fs/promises';
import { isMissing } from './disk.ts';

/** Parse JSONL text: whole lines only; blank, torn or unparseable lines are skipped. */
export function parseJsonl<T>(text: string): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A torn line from a crash or a hand edit: skipped by contract, never fatal.
    }
  }
  return out;
}

/** Every whole record of a JSONL file; [] when the file does not exist. */
export async function readJsonl<T>(abs: string): Promise<T[]> {
  try {
    return parseJsonl<T>(await readFile(abs, 'utf8'));
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

/** The last `bytes` bytes of a file as text ('' when absent) and whether they start at the file's start. */
export async function readTail(abs: string, bytes: number): Promise<{ text: string; whole: boolean }> {
  const fh = await open(abs, 'r').catch((err: unknown) => { if (isMissing(err)) return undefined; throw err; });
  if (!fh) return { text: '', whole: true };
  try {
    const size = (await fh.stat()).size;
    const len = Math.min(size, bytes);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return { text: buf.toString('utf8'), whole: len === size };
  } finally {
    await fh.close();
  }
}

/**
 * Visit the whole records of a JSONL file newest first, reading backwards in chunks from `end` (default:
 * its size), until `visit` returns false or the file's start; nothing when the file does not exist.
 */
export async function scanJsonlBackwards<T>(abs: string, visit: (rec: T) => boolean, o: { end?: number; chunkBytes?: number } = {}): Promise<void> {
  const fh = await open(abs, 'r').catch((err: unknown) => { if (isMissing(err)) return undefined; throw err; });
  if (!fh) return;
  const chunkBytes = o.chunkBytes ?? 64 * 1024;
  try {
    let pos = o.end ?? (await fh.stat()).size;
    let rest = Buffer.alloc(0);
    while (pos > 0) {
      const len = Math.min(chunkBytes, pos);
      pos -= len;
      const chunk = Buffer.alloc(len);
      await fh.read(chunk, 0, len, pos);
      const buf = Buffer.concat([chunk, rest]);
      // Bytes before the first newline may belong to an earlier line: keep them for the next round.
      const cut = pos > 0 ? buf.indexOf(0x0a) : -1;
      rest = cut >= 0 ? buf.subarray(0, cut) : pos > 0 ? buf : Buffer.alloc(0);
      if (cut < 0 && pos > 0) continue;
      const lines = parseJsonl<T>(buf.subarray(cut + 1).toString('utf8'));
      for (let i = lines.length - 1; i >= 0; i--) if (!visit(lines[i]!)) return;
    }
  } finally {
    await fh.close();
  }
}
