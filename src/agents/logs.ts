import { watch, type FSWatcher } from 'node:fs';
import { appendFile, mkdir, open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/** `GET /agents/{sid}/logs`: the log (or its tail, cut at a line start) and the file's size in bytes. */
export interface LogTail {
  content: string;
  size: number;
}

/** The whole log, or its last `tailBytes` bytes starting at a line start; null when there is no log file. */
export async function readLogTail(file: string, tailBytes = 0): Promise<LogTail | null> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    const start = tailBytes > 0 && tailBytes < size ? size - tailBytes : 0;
    // One byte more than the window: when it is a newline the window already starts a line.
    const from = start > 0 ? start - 1 : 0;
    const buf = Buffer.alloc(size - from);
    await fh.read(buf, 0, buf.length, from);
    const nl = buf.indexOf(0x0a);
    const cut = start === 0 ? 0 : nl < 0 ? buf.length : nl + 1;
    const body = buf.subarray(cut);
    return { content: body.toString('utf8'), size };
  } finally {
    await fh.close();
  }
}

/**
 * Append one line to a session log (hook events): one O_APPEND write, so it never splits a line the agent
 * writes at the same time, and followers (SSE streams) pick it up like the agent's own output.
 */
export async function appendLogLine(file: string, line: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${line.replace(/[\r\n]+/g, ' ')}\n`);
}

/** Complete lines of `buf` (read at byte `offset`): each line's text and the byte offset just after it (pure). */
export function splitLines(buf: Buffer, offset: number, flushPartial = false): { lines: { text: string; end: number }[]; consumed: number } {
  const lines: { text: string; end: number }[] = [];
  let pos = 0;
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, pos)) {
    lines.push({ text: buf.subarray(pos, nl).toString('utf8').replace(/\r$/, ''), end: offset + nl + 1 });
    pos = nl + 1;
  }
  // A line longer than one read with no newline yet is sent as it is, so a stream never stalls on it.
  if (flushPartial && pos === 0 && buf.length > 0) {
    lines.push({ text: buf.toString('utf8'), end: offset + buf.length });
    pos = buf.length;
  }
  return { lines, consumed: pos };
}

const CHUNK = 256 * 1024;

/** Follows one log file from a byte offset; `close()` frees its watcher and timer. */
export interface LogFollower {
  close(): void;
}

/** Open followers, so a test (and /status) can see that closed streams free their resources. */
export class LogFollowers {
  private open = new Set<LogFollower>();
  get size(): number { return this.open.size; }

  /** Call `onLine` for every complete line of `file` after `offset`, now and as the file grows (even before it exists). */
  follow(file: string, offset: number, onLine: (text: string, end: number) => void, opts: { pollMs?: number } = {}): LogFollower {
    let pos = offset;
    let closed = false;
    let running = false;
    let again = false;
    const pump = async (): Promise<void> => {
      if (running) { again = true; return; }
      running = true;
      try {
        do {
          again = false;
          pos = await readNew(file, pos, (t, e) => { if (!closed) onLine(t, e); });
        } while (again && !closed);
      } catch {
        // The file vanished or is unreadable for now; the next event or poll tries again.
      } finally {
        running = false;
      }
    };
    // The folder, not the file: the log may not exist yet, and appends to it show up as its changes.
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(dirname(file), (_ev, name) => { if (!name || name === basename(file)) void pump(); });
      watcher.on('error', () => undefined);
    } catch {
      watcher = null;
    }
    // fs.watch can miss events (network file systems, overflow): a slow poll backs it up.
    const timer = setInterval(() => void pump(), opts.pollMs ?? 1000);
    const handle: LogFollower = {
      close: () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        watcher?.close();
        this.open.delete(handle);
      },
    };
    this.open.add(handle);
    void pump();
    return handle;
  }
}

// Read from `pos` to the end of the file in chunks; returns the offset after the last complete line.
async function readNew(file: string, pos: number, onLine: (text: string, end: number) => void): Promise<number> {
  const { size } = await stat(file).catch(() => ({ size: -1 }));
  if (size < 0) return pos;
  // The log was truncated or replaced: start over from its beginning.
  if (size < pos) pos = 0;
  if (size === pos) return pos;
  const fh = await open(file, 'r');
  try {
    while (pos < size) {
      const buf = Buffer.alloc(Math.min(CHUNK, size - pos));
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const { lines, consumed } = splitLines(buf.subarray(0, bytesRead), pos, bytesRead === CHUNK);
      for (const l of lines) onLine(l.text, l.end);
      if (consumed === 0) break;
      pos += consumed;
    }
  } finally {
    await fh.close();
  }
  return pos;
}
