// The texts a server's store wrote last, kept for the next compare-and-set of the same record: a task is
// claimed and completed moments apart, and reading its file again costs four system calls.
import { textOf, type Content } from './records/cas.ts';

/** Last texts by path, the least recently written dropped beyond `max`. */
export interface RecentTexts {
  get(abs: string): string | undefined;
  /** `abs` now holds `content` (null: deleted, forgotten). */
  set(abs: string, content: Content | null): void;
}

/** Only for a tree this process owns: a file changed by anyone else would be read stale. */
export function recentTexts(max: number): RecentTexts {
  const texts = new Map<string, Content>();
  return {
    get: (abs) => { const c = texts.get(abs); return c === undefined ? undefined : textOf(c); },
    set(abs, content) {
      texts.delete(abs); // re-inserted last: the oldest write goes first
      if (content === null) return;
      texts.set(abs, content);
      if (texts.size > max) texts.delete(texts.keys().next().value!);
    },
  };
}
