// A small JSON file under .sdd/secrets (0600, atomic replace), loaded once and saved after each change.
import { readFile } from 'node:fs/promises';
import type { SddLayout } from '../../store/layout.ts';
import { ensureSecretsDir, writeSecretFile } from '../tokens.ts';

/** Load/save of one secret JSON file; saves run one at a time and the last one wins. */
export class SecretJson<T> {
  private chain: Promise<unknown> = Promise.resolve();
  constructor(private readonly layout: SddLayout, private readonly path: string) {}

  /** The parsed file, or `fallback` when it does not exist. A corrupt file throws (never silently reset). */
  async load(fallback: T): Promise<T> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
      throw new Error(`${this.path}: ${(e as Error).message}`);
    }
  }

  /** Write `value` (2-space JSON, trailing newline) after any save before it. */
  save(value: T): Promise<void> {
    const text = JSON.stringify(value, null, 2) + '\n';
    const next = this.chain.catch(() => undefined).then(async () => {
      await ensureSecretsDir(this.layout);
      await writeSecretFile(this.path, text);
    });
    this.chain = next;
    return next;
  }
}
