import { monotonicFactory } from 'ulid';
import { notFound } from '../lib/http-error.ts';

/** Every id that reaches a path must match this: no `..`, no `/`, no NUL, at most 64 characters. */
export const ID_PATTERN = /^[0-9a-z][0-9a-z_-]{0,63}$/;

/** Injected id source, so tests can make ids deterministic. */
export interface Ids {
  /** A new lowercase ULID: 26 Crockford base32 characters, sortable by creation time. */
  next(): string;
}

/** Monotonic lowercase ULIDs (strictly increasing within one process, even within one millisecond). */
export function ulidIds(now: () => number = Date.now): Ids {
  const make = monotonicFactory();
  return { next: () => make(now()).toLowerCase() };
}

/** True when `id` may be used as a file name. */
export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id);
}

/** Throw the contract's 404 for an id that cannot name a task. */
export function assertTaskId(id: unknown): string {
  if (!isValidId(id)) throw notFound(`Task '${String(id).slice(0, 200)}' not found`);
  return id;
}
