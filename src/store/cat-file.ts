// Object reads through one long-lived `git cat-file --batch`: thousands of small blobs without a process each.
import { spawn } from 'node:child_process';
import { gitBaseEnv } from './git-cli.ts';
import { hardenedArgs } from './git-harden.ts';

/** Reads objects by id or `rev:path`; null when git says missing. Requests are answered in order. */
export interface BlobReader {
  read(spec: string): Promise<Buffer | null>;
  close(): void;
}

/** The header line of one `git cat-file --batch` answer: the object's type and size, or null (missing, ambiguous). */
export function batchHeader(line: string): { type: string; size: number } | null {
  if (line.endsWith(' missing') || line.endsWith(' ambiguous')) return null;
  const [, type, size] = line.split(' ');
  return { type: type!, size: Number(size) };
}

/** A reader over the repository at `root` (started on first use). */
export function createBlobReader(root: string): BlobReader {
  let child: ReturnType<typeof spawn> | null = null;
  const waiting: { resolve(b: Buffer | null): void; reject(e: Error): void }[] = [];
  let buf = Buffer.alloc(0);
  // Chunks not yet joined into `buf`, and how many bytes the answer at the front needs (a big blob
  // arrives in many chunks: joining once it is whole keeps that linear).
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let need = 0;

  // Answers are "<oid> <type> <size>\n<bytes>\n" or "<spec> missing\n"; take as many as are whole.
  const drain = () => {
    for (;;) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0 || !waiting.length) return;
      const header = batchHeader(buf.subarray(0, nl).toString('utf8'));
      if (!header) {
        buf = buf.subarray(nl + 1);
        waiting.shift()!.resolve(null);
        continue;
      }
      const { size } = header;
      need = nl + 1 + size + 1;
      if (buf.length < need) return;
      need = 0;
      const body = Buffer.from(buf.subarray(nl + 1, nl + 1 + size));
      buf = buf.subarray(nl + 1 + size + 1);
      waiting.shift()!.resolve(body);
    }
  };
  const start = () => {
    const c = spawn('git', [...hardenedArgs(root), 'cat-file', '--batch'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: gitBaseEnv() });
    c.stdout!.on('data', (d: Buffer) => {
      pending.push(d);
      pendingBytes += d.length;
      if (buf.length + pendingBytes < need) return;
      buf = Buffer.concat([buf, ...pending]);
      pending = [];
      pendingBytes = 0;
      drain();
    });
    const fail = (err: Error) => { for (const w of waiting.splice(0)) w.reject(err); child = null; };
    c.on('error', fail);
    c.on('close', (code) => { if (waiting.length) fail(new Error(`git cat-file --batch exited ${code}`)); });
    return c;
  };
  return {
    read(spec) {
      if (/[\n\r\0]/.test(spec)) return Promise.reject(new Error('object name with a line break'));
      child ??= start();
      const p = new Promise<Buffer | null>((resolve, reject) => waiting.push({ resolve, reject }));
      child.stdin!.write(`${spec}\n`);
      return p;
    },
    close() {
      child?.stdin?.end();
      child = null;
    },
  };
}
