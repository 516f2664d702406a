import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KeyedMutex } from '../lib/mutex.ts';
import { storageError, type Faults } from './io.ts';

/** Appends JSON lines durably: one handle per file; lines appended concurrently share one `write` + `datasync`. */
export interface JsonlAppender {
  /** Append `value` as one line; resolves once the line is on disk. */
  append(abs: string, value: unknown): Promise<void>;
  /** Close every open handle. */
  close(): Promise<void>;
}

/** A JsonlAppender; `faults` lets tests inject disk errors before a write. */
export function createJsonlAppender(opts: { faults?: Faults } = {}): JsonlAppender {
  const handles = new Map<string, { fh: FileHandle; writer: GroupWriter }>();
  const mutex = new KeyedMutex();

  const drop = async (abs: string) => {
    const h = handles.get(abs);
    handles.delete(abs);
    if (!h) return;
    await h.writer.drain();
    await h.fh.close().catch(() => undefined);
  };

  // Opening (with the torn-line seal check) runs once per handle, under the per-file mutex.
  const handleFor = (abs: string) =>
    handles.get(abs) ?? mutex.run(abs, async () => {
      const known = handles.get(abs);
      if (known) return known;
      const fh = await openHandle(abs);
      try {
        let size = (await fh.stat()).size;
        // A crash may have torn the last line: end it so the fragment stays its own (skipped) line.
        if (size > 0 && !(await endsWithNewline(fh, size))) {
          await fh.write('\n');
          size++;
        }
        const h = { fh, writer: groupWriter(fh, size, { beforeWrite: () => opts.faults?.beforeWrite?.(abs) }) };
        handles.set(abs, h);
        return h;
      } catch (err) {
        await fh.close().catch(() => undefined);
        throw err;
      }
    });

  const append = async (abs: string, value: unknown) => {
    const line = JSON.stringify(value) + '\n';
    let h: { fh: FileHandle; writer: GroupWriter } | undefined;
    try {
      h = await handleFor(abs);
      await h.writer.write(line);
    } catch (err) {
      // The writer took back the failed batch; reopen next time so the seal check runs again.
      if (h) await mutex.run(abs, async () => { if (handles.get(abs) === h) await drop(abs); });
      throw storageError(err, abs);
    }
  };

  const close = async () => {
    await Promise.all([...handles.keys()].map((abs) => mutex.run(abs, () => drop(abs))));
  };
  return { append, close };
}

/** Group commit on one append-mode handle: `write` resolves once its data is written and datasynced. */
export interface GroupWriter {
  write(data: string): Promise<void>;
  /** Resolves when nothing is queued or being written (never rejects). */
  drain(): Promise<void>;
}

/**
 * Data queued while a `write` + `datasync` runs goes out together in the next one, in queue order.
 * A failed batch is truncated back (best effort) and it, everything queued behind it and every later
 * write are refused: later data may depend on it (a hash chain), so the owner must reopen.
 */
export function groupWriter(fh: Pick<FileHandle, 'write' | 'datasync' | 'truncate'>, size: number, hooks: { beforeWrite?(): void } = {}): GroupWriter {
  let queue: { data: string; resolve(): void; reject(err: unknown): void }[] = [];
  let running: Promise<void> | undefined;
  let broken: unknown;
  const run = async () => {
    while (queue.length && broken === undefined) {
      const batch = queue;
      queue = [];
      const buf = Buffer.from(batch.map((q) => q.data).join(''), 'utf8');
      try {
        hooks.beforeWrite?.();
        // A short write is rare on a regular file but possible (ENOSPC half-way): finish or throw.
        for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
        await fh.datasync();
        size += buf.length;
        for (const q of batch) q.resolve();
      } catch (err) {
        broken = err;
        await fh.truncate(size).catch(() => undefined);
        for (const q of [...batch, ...queue]) q.reject(err);
        queue = [];
      }
    }
    running = undefined;
  };
  return {
    write: (data) => new Promise<void>((resolve, reject) => {
      if (broken !== undefined) { reject(broken); return; }
      queue.push({ data, resolve, reject });
      running ??= run();
    }),
    drain: () => running ?? Promise.resolve(),
  };
}

async function openHandle(abs: string): Promise<FileHandle> {
  try {
    return await open(abs, 'a+', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(abs), { recursive: true });
    return open(abs, 'a+', 0o644);
  }
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
  const found: T[] = [];
  await scanJsonlBackwards<T>(abs, (rec) => found.push(rec) < n, chunkBytes);
  return found.reverse();
}

/**
 * Visit the whole records of a JSONL file newest first, reading backwards in chunks, until `visit`
 * returns false or the file's start; nothing when the file does not exist.
 */
export async function scanJsonlBackwards<T>(abs: string, visit: (rec: T) => boolean, chunkBytes = 64 * 1024): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(abs, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    let pos = (await fh.stat()).size;
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
