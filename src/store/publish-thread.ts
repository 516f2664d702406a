// The client side of the publisher's thread (publish-worker.ts): one request at a time, answered per file.
import type { Worker } from 'node:worker_threads';
import { moduleWorker } from '../lib/worker.ts';
import type { PublishReply, PublishRequest } from './publish-worker.ts';

/** Files replaced (or deleted) off the event loop; per file, undefined when written, else its error. */
export interface PublishThread {
  /** Files to write: a text, a record's compact JSON (`{ json }`: the thread renders its file text), or null (delete). */
  write(files: [abs: string, text: string | { json: string } | null][]): Promise<({ code?: string; message: string } | undefined)[]>;
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
    // A small young generation: the thread only holds one message of texts at a time, and its default
    // (3 x 16 MiB semi-spaces) added ~30 MiB of RSS while 100k tasks were created.
    const w = moduleWorker(import.meta.url, 'publish-worker', { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
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
