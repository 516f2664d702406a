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
