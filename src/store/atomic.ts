// Whole-file writes that never leave a partial file: temp beside the target, then rename (or link).
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, mkdirSync, openSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isMissing, storageError, type Faults } from './disk.ts';
import { RecordExists } from './types.ts';

/** A temp path next to `abs` (same directory, so rename and link stay on one filesystem). */
export function tempPathFor(abs: string): string {
  return join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** A temp file name (tempPathFor's) of a write this process has in flight, not a dead writer's. */
export const isOwnTemp = (name: string): boolean => name.endsWith('.tmp') && name.includes(`.${process.pid}.`);

export interface AtomicOptions {
  faults?: Faults;
  /** File mode of a new file (default 0644). */
  mode?: number;
  /** false: no fsync of the file nor its folder (a journal holds the text until a syncfs). Default true. */
  durable?: boolean;
}

/** Makes a rename or link durable; some filesystems refuse to fsync a directory, which is harmless. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => null);
  if (!fh) return;
  await fh.sync().catch(() => undefined);
  await fh.close().catch(() => undefined);
}

// A fresh temp file beside `abs` holding `data` (fsync'd when durable); parent folders created on demand.
async function writeTemp(abs: string, data: string | Uint8Array, o: AtomicOptions): Promise<string> {
  const tmp = tempPathFor(abs);
  const mode = o.mode ?? 0o644;
  const fh = await open(tmp, 'wx', mode).catch(async (err: unknown) => {
    if (!isMissing(err)) throw err;
    await mkdir(dirname(abs), { recursive: true });
    return open(tmp, 'wx', mode);
  });
  try {
    o.faults?.beforeWrite?.(abs);
    await fh.writeFile(data);
    if (o.durable ?? true) await fh.sync();
    await fh.close();
    return tmp;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Replace `abs` atomically (temp, fsync, rename, folder fsync); a failure leaves the old file and no temp. */
export async function writeFileAtomic(abs: string, data: string | Uint8Array, o: AtomicOptions = {}): Promise<void> {
  let tmp: string | undefined;
  try {
    tmp = await writeTemp(abs, data, o);
    await rename(tmp, abs);
    tmp = undefined;
    if (o.durable ?? true) await syncDir(dirname(abs));
  } catch (err) {
    if (tmp) await unlink(tmp).catch(() => undefined);
    throw storageError(err, abs);
  }
}

/** Create `abs` only if absent (temp, fsync, link): RecordExists when it exists; never a partial file. */
export async function createExclusive(abs: string, data: string | Uint8Array, o: AtomicOptions = {}): Promise<void> {
  let tmp: string | undefined;
  try {
    tmp = await writeTemp(abs, data, o);
    // link decides the winner atomically, against every writer.
    await link(tmp, abs);
    if (o.durable ?? true) await syncDir(dirname(abs));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new RecordExists(abs);
    throw storageError(err, abs);
  } finally {
    if (tmp) await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Write-behind of a journaled text, synchronous, in place: no temp file, no rename, no truncation to
 * zero (a file creation or rename costs 0.2–1 ms in the kernel here, freeing blocks with online discard
 * too; an overwrite ~10 µs). Only for texts a journal holds until a checkpoint's syncfs: a crash
 * mid-write leaves a torn file the replay rewrites. `null` deletes the file (absent is fine).
 */
export function writeBehindSync(abs: string, text: string | null): void {
  if (text === null) {
    try { unlinkSync(abs); } catch (err) { if (!isMissing(err)) throw err; }
    return;
  }
  const buf = Buffer.from(text, 'utf8');
  let fd: number;
  try {
    fd = openSync(abs, 'r+');
  } catch (err) {
    if (!isMissing(err)) throw err;
    // A new file, usually in a folder that exists: the folder is made only when the create says it is missing
    // (a recursive mkdir per new file was 3 of the 22 s the publisher's thread spent seeding 100k tasks).
    try {
      fd = openSync(abs, 'wx', 0o644);
    } catch (e) {
      if (!isMissing(e)) throw e;
      mkdirSync(dirname(abs), { recursive: true });
      fd = openSync(abs, 'wx', 0o644);
    }
  }
  try {
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off, off);
    ftruncateSync(fd, buf.length);
  } finally {
    closeSync(fd);
  }
}

/** Synchronous replace without fsync (temp + rename; the caller syncs the filesystem after). `null` deletes. */
export function replaceFileSync(abs: string, text: string | null): void {
  if (text === null) {
    try { unlinkSync(abs); } catch (err) { if (!isMissing(err)) throw err; }
    return;
  }
  const tmp = tempPathFor(abs);
  try {
    try {
      writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
    } catch (err) {
      if (!isMissing(err)) throw err;
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
    }
    renameSync(tmp, abs);
  } catch (err) {
    try { unlinkSync(tmp); } catch { /* never created, or renamed */ }
    throw err;
  }
}
