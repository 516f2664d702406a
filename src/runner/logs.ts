import { watch, type FSWatcher } from 'node:fs';
import { appendFile, mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { basename, dirname } from 'node:path';

const CHUNK = 256 * 1024;

/** `GET /agents/{sid}/logs`: the log's window (cut at a line start) and the file's size in bytes. */
export interface LogTail {
  content: string;
  size: number;
}

/** Window of `GET /agents/{sid}/logs` when `tail_bytes` is 0 or absent, and the largest one may ask for: a log is never read whole. */
export const LOG_TAIL_DEFAULT = 1024 * 1024;
export const LOG_TAIL_MAX = 8 * 1024 * 1024;

/** An open log and the byte range to send: from a line start within the last `tailBytes` to the size at opening. */
export interface LogWindow {
  fh: FileHandle;
  size: number;
  start: number;
  /** True when the window does not begin at the start of the log. */
  truncated: boolean;
}

/** Open `file` and place its window (`tailBytes` 0 = LOG_TAIL_DEFAULT, at most LOG_TAIL_MAX); null when there is no log file. */
export async function openLogWindow(file: string, tailBytes = 0): Promise<LogWindow | null> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    const want = Math.min(tailBytes > 0 ? tailBytes : LOG_TAIL_DEFAULT, LOG_TAIL_MAX);
    const start = size > want ? await nextLineStart(fh, size - want, size) : 0;
    return { fh, size, start, truncated: start > 0 };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

// The first line start at or after `at`: the byte before `at` is looked at too, so a window that already starts a line keeps it.
async function nextLineStart(fh: FileHandle, at: number, size: number): Promise<number> {
  for (let pos = at - 1; pos < size; pos += CHUNK) {
    const buf = Buffer.alloc(Math.min(CHUNK, size - pos));
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
    if (nl >= 0) return pos + nl + 1;
    if (bytesRead === 0) break;
  }
  return size;
}

/** The window's text, decoded piece by piece (64 KiB reads; a character split between reads is kept whole); closes the file. */
export async function* windowText(w: LogWindow): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  try {
    for (let pos = w.start; pos < w.size;) {
      const buf = Buffer.alloc(Math.min(CHUNK, w.size - pos));
      const { bytesRead } = await w.fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      yield decoder.write(buf.subarray(0, bytesRead));
    }
    yield decoder.end();
  } finally {
    await w.fh.close();
  }
}

/** The `AgentLogsResponse` JSON of a window, as pieces for `streamJson` (the content is escaped piece by piece). */
export async function* logResponseJson(sid: string, w: LogWindow): AsyncGenerator<string> {
  yield `{"session_id":${JSON.stringify(sid)},"size":${w.size},"truncated":${w.truncated},"content":"`;
  for await (const text of windowText(w)) if (text) yield JSON.stringify(text).slice(1, -1);
  yield '"}';
}

/** The window of a log read into memory (bounded by LOG_TAIL_MAX); null when there is no log file. */
export async function readLogTail(file: string, tailBytes = 0): Promise<LogTail | null> {
  const w = await openLogWindow(file, tailBytes);
  if (!w) return null;
  let content = '';
  for await (const t of windowText(w)) content += t;
  return { content, size: w.size };
}

/**
 * Append one line to a session log (hook events): one O_APPEND write, so it never splits a line the agent
 * writes at the same time, and followers (SSE streams) pick it up like the agent's own output.
 */
export async function appendLogLine(file: string, line: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${line.replace(/[\r\n]+/g, ' ')}\n`, { mode: 0o600 });
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


/** Follows one log file from a byte offset; `close()` frees its watcher and timer, `resume()` reads on after a pause. */
export interface LogFollower {
  close(): void;
  resume(): void;
}

/** Where a new stream starts: `Last-Event-ID` when given, else the line start within the last LOG_TAIL_DEFAULT bytes. */
export async function streamStart(file: string, lastEventId: number): Promise<number> {
  if (lastEventId > 0) return lastEventId;
  const w = await openLogWindow(file, LOG_TAIL_DEFAULT);
  if (!w) return 0;
  await w.fh.close();
  return w.start;
}

/** Open followers, so a test (and /status) can see that closed streams free their resources. */
export class LogFollowers {
  private open = new Set<LogFollower>();
  get size(): number { return this.open.size; }

  /**
   * Call `onLine` for every complete line of `file` after `offset`, now and as the file grows (even before
   * it exists). While `paused()` (the client's socket is full) no more is read; `resume()` goes on.
   */
  follow(file: string, offset: number, onLine: (text: string, end: number) => void, opts: { pollMs?: number; paused?: () => boolean } = {}): LogFollower {
    const paused = opts.paused ?? (() => false);
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
          pos = await readNew(file, pos, (t, e) => { if (!closed) onLine(t, e); }, paused);
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
      resume: () => { if (!closed) void pump(); },
    };
    this.open.add(handle);
    void pump();
    return handle;
  }
}

// Read from `pos` to the end of the file in chunks (until `paused()`); returns the offset after the last complete line sent.
async function readNew(file: string, pos: number, onLine: (text: string, end: number) => void, paused: () => boolean): Promise<number> {
  const { size } = await stat(file).catch(() => ({ size: -1 }));
  if (size < 0) return pos;
  // The log was truncated or replaced: start over from its beginning.
  if (size < pos) pos = 0;
  if (size === pos) return pos;
  const fh = await open(file, 'r');
  try {
    while (pos < size && !paused()) {
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
