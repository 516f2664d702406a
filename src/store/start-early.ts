// The start's comparison begun as soon as `svc up` holds the server lock, before the rest of the server's
// modules load (~0.5 s at 100k tasks: bench/README.md "start"). Its own module, so the scan's thread does not load the journal's.
import type { Git } from './git-cli.ts';
import { refCommit } from './git-objects.ts';
import { journalPending, readJournalDeletes } from './journal-replay.ts';
import { STATE_REF, type SddLayout } from './layout.ts';
import { largeBoard, scanOnThread, type EarlyScan } from './start-scan.ts';

/**
 * On a large board (`large`: estimated), when no journal holds changes to replay (a clean stop): nothing
 * changes the files before the recover would have begun the same comparison, with the same journaled
 * deletes and the ref's head of now, leaving what `svc up` leaves for after the start (RecoverOptions.later).
 * `recover` takes it when it asks the same (start-scan.ts earlyMatches).
 */
export async function scanEarly(layout: SddLayout, git: Git, o: { large?: boolean } = {}): Promise<EarlyScan | null> {
  if (journalPending(layout) || !(o.large ?? largeBoard(layout))) return null;
  const head = await refCommit(git, STATE_REF);
  const deletions = readJournalDeletes(layout);
  const job = { head, deletions, snapshot: layout.boardSnapshot, later: true };
  return { ...scanOnThread(layout, head, { ...job, restore: true, deletions: new Set(deletions) }), job };
}

