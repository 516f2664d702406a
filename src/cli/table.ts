/** `text` cut to `max` characters, ending in `…` when it was longer. */
export function cut(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length <= max ? one : `${one.slice(0, Math.max(0, max - 1))}…`;
}

/** Render rows as an aligned text table for people (`--json` prints the raw data instead); long cells end in `…`. */
export function table(rows: Record<string, unknown>[], columns: string[], maxWidth = 60): string {
  const cell = (v: unknown) => cut(v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v), maxWidth);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}
