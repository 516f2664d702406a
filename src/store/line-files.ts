// Append handles for journaled lines: opened ahead, written synchronously, no fsync (the journal holds
// the lines until a checkpoint's syncfs), so a reader on the event loop sees each line in the file or
// still queued, never half way.
import { writeSync, ftruncateSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { endsWithNewline } from './append-log.ts';
import { isMissing, storageError } from './disk.ts';

interface Handle { fh: FileHandle; size: number; seal: boolean }

/** Files taking appended lines; at most `max` open, the least recently used closed first. */
export interface LineFiles {
  /** Open `abs` (its folder created, a torn last line noted) so `write` can run synchronously. */
  ready(abs: string): Promise<void>;
  /** Append `data` now (after `ready`); on failure the file is cut back and the mapped error thrown. */
  write(abs: string, data: string): void;
  close(): Promise<void>;
}

export function createLineFiles(max = 64): LineFiles {
  const open_ = new Map<string, Handle>();
  const drop = (abs: string) => {
    const h = open_.get(abs);
    open_.delete(abs);
    void h?.fh.close().catch(() => undefined);
  };
  return {
    async ready(abs) {
      const known = open_.get(abs);
      if (known) { open_.delete(abs); open_.set(abs, known); return; }
      const fh = await open(abs, 'a+', 0o644).catch(async (err: unknown) => {
        if (!isMissing(err)) throw storageError(err, abs);
        await mkdir(dirname(abs), { recursive: true });
        return open(abs, 'a+', 0o644);
      });
      const size = (await fh.stat()).size;
      open_.set(abs, { fh, size, seal: size > 0 && !(await endsWithNewline(fh, size)) });
      if (open_.size > max) drop(open_.keys().next().value!);
    },
    write(abs, data) {
      const h = open_.get(abs);
      if (!h) throw new Error(`line file not ready: ${abs}`);
      const buf = Buffer.from((h.seal ? '\n' : '') + data, 'utf8');
      try {
        for (let off = 0; off < buf.length;) off += writeSync(h.fh.fd, buf, off, buf.length - off);
      } catch (err) {
        // Cut back what a short write left; if that fails, reopen next time (size and seal re-read).
        try { ftruncateSync(h.fh.fd, h.size); } catch { drop(abs); }
        throw storageError(err, abs);
      }
      h.size += buf.length;
      h.seal = false;
    },
    async close() {
      const all = [...open_.values()];
      open_.clear();
      await Promise.all(all.map((h) => h.fh.close().catch(() => undefined)));
    },
  };
}
