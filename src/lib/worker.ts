// Worker threads running one of our modules, from dist (.js) or from source under tsx (.ts).
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker running the module `name` (no extension) beside the module whose `import.meta.url` is `base`.
 * From source, Node 20 does not pass tsx's loader to a worker: a one-line bootstrap registers it first.
 */
export function moduleWorker(base: string, name: string, options: WorkerOptions = {}): Worker {
  const ext = extname(fileURLToPath(base));
  const url = new URL(`./${name}${ext}`, base);
  if (ext !== '.ts') return new Worker(url, options);
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
