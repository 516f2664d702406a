import { readFileSync, statSync } from 'node:fs';

/**
 * A parsed file that is re-read only when its inode, mtime or size changes (a stat per call, a few µs);
 * a missing file gives `empty`, and a file that fails to parse keeps the last good value (`onBad` is told).
 */
export function fileCache<T>(path: string, parse: (text: string) => T, empty: T, onBad: (e: Error) => void): () => T {
  let key = '';
  let good = empty;
  return () => {
    const st = statSync(path, { throwIfNoEntry: false });
    const next = st ? `${st.ino}:${st.mtimeMs}:${st.size}` : 'absent';
    if (next === key) return good;
    key = next;
    if (!st) return (good = empty);
    try {
      good = parse(readFileSync(path, 'utf8'));
    } catch (e) {
      onBad(e as Error);
    }
    return good;
  };
}
