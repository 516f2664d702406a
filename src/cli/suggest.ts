/** Edit distance between two words (insert, delete, substitute, swap of neighbours all cost 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest known word to `word` (a typo of it, or a word it starts), or undefined when none is close (pure). */
export function didYouMean(word: string, known: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = name.startsWith(w) && w.length >= 2 ? 0.5 : editDistance(w, name.toLowerCase());
    if (d <= Math.max(1, Math.floor(name.length / 3)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** ` (did you mean 'x'?)` or ''. */
export function suggestion(word: string, known: readonly string[], prefix = ''): string {
  const s = didYouMean(word, known);
  return s ? ` (did you mean '${prefix}${s}'?)` : '';
}
