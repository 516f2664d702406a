// What the webhook routes share: header lookup, response documentation, and background jobs to wait for.
import type { IncomingMessage } from 'node:http';
import { Type } from '../lib/typebox.ts';
import type { HeaderGet } from './trackers/types.ts';

/** Header lookup by lower-case name; the first value of a repeated header. */
export function headerGet(req: IncomingMessage): HeaderGet {
  return (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
}

const Detail = Type.Object({ detail: Type.String() }, { additionalProperties: true });
/** A documented error response. */
export const E = (description: string) => ({ description, schema: Detail });

/** Work that goes on after a response (chat creations); stop() waits for it. */
export class Background {
  private jobs = new Set<Promise<unknown>>();
  /** Keep `p` until it settles (its rejection is the caller's to handle). */
  track<T>(p: Promise<T>): Promise<T> {
    const kept = p.then(() => undefined, () => undefined);
    this.jobs.add(kept);
    void kept.finally(() => this.jobs.delete(kept));
    return p;
  }
  /** Resolves once every tracked job settled. */
  async idle(): Promise<void> {
    while (this.jobs.size) await Promise.all([...this.jobs]);
  }
}

/** Resolves with `p`'s value, or with `fallback` after `ms` (the timer is cleared either way). */
export function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((r) => { timer = setTimeout(() => r(fallback), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
