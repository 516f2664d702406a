// The client side of the publisher's thread (publish-worker.ts): one request at a time, answered per file.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PublishReply, PublishRequest } from './publish-worker.ts';

/** Files replaced (or deleted) off the event loop; per file, undefined when written, else its error. */
export interface PublishThread {
  write(files: [abs: string, text: string | null][]): Promise<({ code?: string; message: string } | undefined)[]>;
  /** The `*.json` texts of a folder by name (temp files and locks of a dead writer removed), `pending` texts over them. */
  readFolder(dir: string, pending: Iterable<[abs: string, text: string | null]>): Promise<[name: string, text: string][]>;
  terminate(): Promise<void>;
}

/** Started on first use; a crash of the thread fails the request in flight, the next one starts another. */
export function createPublishThread(): PublishThread {
  let worker: Worker | undefined;
  let nextId = 0;
  const replies = new Map<number, { resolve(r: PublishReply): void; reject(err: unknown): void }>();
  const thread = (): Worker => {
    if (worker) return worker;
    // .js when built; .ts from source under tsx (dev, tests): Node 20 does not pass the loader to a
    // worker, so a one-line bootstrap registers it before importing the worker module.
    const ext = extname(fileURLToPath(import.meta.url));
    const url = new URL(`./publish-worker${ext}`, import.meta.url);
    const w = ext === '.ts'
      ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true })
      : new Worker(url);
    w.unref();
    w.on('message', (r: PublishReply) => {
      replies.get(r.id)?.resolve(r);
      replies.delete(r.id);
      if (!replies.size) w.unref(); // idle: the thread never holds a stopping process
    });
    const fail = (err: unknown) => {
      if (worker === w) worker = undefined;
      for (const p of replies.values()) p.reject(err);
      replies.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`record writer thread exited (${code})`)));
    return (worker = w);
  };
  const ask = (req: PublishRequest) => new Promise<PublishReply>((resolve, reject) => {
    const w = thread();
    replies.set(req.id, { resolve, reject });
    w.ref(); // someone awaits this answer
    w.postMessage(req);
  });
  return {
    async write(files) {
      const reply = await ask({ id: ++nextId, files });
      return 'results' in reply ? reply.results.map((r) => r ?? undefined) : [];
    },
    async readFolder(folder, pending) {
      const reply = await ask({ id: ++nextId, folder });
      const found = new Map('texts' in reply ? reply.texts : []);
      for (const [abs, text] of pending) {
        const name = abs.slice(folder.length + 1);
        if (!abs.startsWith(folder + '/') || name.includes('/') || !name.endsWith('.json')) continue;
        if (text === null) found.delete(name);
        else found.set(name, text);
      }
      return [...found];
    },
    async terminate() {
      await worker?.terminate();
      worker = undefined;
    },
  };
}
