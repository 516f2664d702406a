import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KeyedMutex } from '../lib/mutex.ts';
import { storageError, type Faults } from './io.ts';

/** Appends JSON lines durably: one handle per file, one `write` + `datasync` per line. */
export interface JsonlAppender {
  /** Append `value` as one line; resolves once the line is on disk. */
  append(abs: string, value: unknown): Promise<void>;
  /** Close every open handle. */
  close(): Promise<void>;
}

/** A JsonlAppender; `faults` lets tests inject disk errors before a write. */
export function createJsonlAppender(opts: { faults?: Faults } = {}): JsonlAppender {
  const handles = new Map<string, FileHandle>();
  const mutex = new KeyedMutex();

  const drop = async (abs: string) => {
    const fh = handles.get(abs);
    handles.delete(abs);
    await fh?.close().catch(() => undefined);
  };

  const append = (abs: string, value: unknown) =>
    mutex.run(abs, async () => {
      const line = JSON.stringify(value) + '\n';
      let fh: FileHandle | undefined;
      let size = 0;
      try {
        fh = handles.get(abs) ?? (await openHandle(abs, handles));
        size = (await fh.stat()).size;
        // A crash may have torn the last line: end it so the fragment stays its own (skipped) line.
        const seal = size > 0 && !(await endsWithNewline(fh, size));
        opts.faults?.beforeWrite?.(abs);
        await fh.write(seal ? '\n' + line : line);
        await fh.datasync();
      } catch (err) {
        // Take back a partial line, and reopen next time so the seal check runs again.
        if (fh) await fh.truncate(size).catch(() => undefined);
        await drop(abs);
        throw storageError(err, abs);
      }
    });

  const close = async () => {
    await Promise.all([...handles.keys()].map((abs) => mutex.run(abs, () => drop(abs))));
  };
  return { append, close };
}

async function openHandle(abs: string, handles: Map<string, FileHandle>): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(abs, 'a+', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(abs), { recursive: true });
    fh = await open(abs, 'a+', 0o644);
  }
  handles.set(abs, fh);
  return fh;
}

async function endsWithNewline(fh: FileHandle, size: number): Promise<boolean> {
  const buf = Buffer.alloc(1);
  await fh.read(buf, 0, 1, size - 1);
  return buf[0] === 0x0a;
}

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
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The last `n` whole records of a JSONL file (oldest first), reading backwards in chunks. */
export async function readJsonlTail<T>(abs: string, n: number, chunkBytes = 64 * 1024): Promise<T[]> {
  if (n <= 0) return [];
  let fh: FileHandle;
  try {
    fh = await open(abs, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  try {
    let pos = (await fh.stat()).size;
    let rest = Buffer.alloc(0);
    const found: T[] = [];
    while (pos > 0 && found.length < n) {
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
      found.unshift(...lines);
    }
    return found.slice(-n);
  } finally {
    await fh.close();
  }
}
