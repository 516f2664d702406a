// The texts a server's store wrote last, kept for the next compare-and-set of the same record: a task is
// claimed and completed moments apart, and reading its file again costs four system calls.

/** Last texts by path, the least recently written dropped beyond `max`. */
export interface RecentTexts {
  get(abs: string): string | undefined;
  /** `abs` now holds `text` (null: deleted, forgotten). */
  set(abs: string, text: string | null): void;
}

/** Only for a tree this process owns: a file changed by anyone else would be read stale. */
export function recentTexts(max: number): RecentTexts {
  const texts = new Map<string, string>();
  return {
    get: (abs) => texts.get(abs),
    set(abs, text) {
      texts.delete(abs); // re-inserted last: the oldest write goes first
      if (text === null) return;
      texts.set(abs, text);
      if (texts.size > max) texts.delete(texts.keys().next().value!);
    },
  };
}
