// Commit messages of refs/sdd/state: pure, so they are tested with plain values.

/** Most notes named in one message; the rest are counted. */
export const MAX_NOTES = 20;
/** Most paths named in a recover message. */
export const MAX_RECOVER_PATHS = 10;

/** `claim a by x; complete b` (distinct notes in order, cut at 20 with `… and N more`), or `update N paths`. */
export function commitMessage(notes: readonly string[], paths: number): string {
  const distinct = [...new Set(notes.map((n) => n.replace(/\s+/g, ' ').trim()).filter(Boolean))];
  if (!distinct.length) return `update ${paths} path${paths === 1 ? '' : 's'}`;
  const shown = distinct.slice(0, MAX_NOTES).join('; ');
  const more = distinct.length - MAX_NOTES;
  return more > 0 ? `${shown}; … and ${more} more` : shown;
}

/** `recover: N paths (a, b, …)` naming the first few paths (relative to `.sdd`). */
export function recoverMessage(paths: readonly string[]): string {
  const shown = paths.slice(0, MAX_RECOVER_PATHS).join(', ');
  const tail = paths.length > MAX_RECOVER_PATHS ? ', …' : '';
  return `recover: ${paths.length} path${paths.length === 1 ? '' : 's'} (${shown}${tail})`;
}
