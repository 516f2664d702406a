import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.ts';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';

/** Cumulative partial-merge state of one session (`.sdd/runtime/merges/<sid>.json`). */
export interface PartialMergeState {
  session_id: string;
  merged_files: string[];
  merge_commits: string[];
  last_merged_at: string | null;
}

/** The body of the partial-merge endpoints. */
export interface PartialMergeResponse {
  merged_files: string[];
  skipped_already_merged: string[];
  uncommitted_files: string[];
  conflicting_files: string[];
  commit_sha: string;
}

/** Where a session's partial-merge state lives. */
export function mergeStatePath(layout: SddLayout, sid: string): string {
  if (!isValidId(sid)) throw new Error(`invalid session id for a path: ${JSON.stringify(sid).slice(0, 80)}`);
  return join(layout.mergesDir, `${sid}.json`);
}

/** The session's state; an empty one when it never merged anything. */
export async function readMergeState(layout: SddLayout, sid: string): Promise<PartialMergeState> {
  try {
    const raw = JSON.parse(await readFile(mergeStatePath(layout, sid), 'utf8')) as Partial<PartialMergeState>;
    return {
      session_id: sid,
      merged_files: Array.isArray(raw.merged_files) ? raw.merged_files : [],
      merge_commits: Array.isArray(raw.merge_commits) ? raw.merge_commits : [],
      last_merged_at: typeof raw.last_merged_at === 'string' ? raw.last_merged_at : null,
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { session_id: sid, merged_files: [], merge_commits: [], last_merged_at: null };
    throw err;
  }
}

/** Write the state atomically (the store's temp file, fsync, rename, folder fsync), stable key order. */
export async function writeMergeState(layout: SddLayout, state: PartialMergeState): Promise<void> {
  const file = mergeStatePath(layout, state.session_id);
  await mkdir(layout.mergesDir, { recursive: true });
  const body = { session_id: state.session_id, merged_files: state.merged_files, merge_commits: state.merge_commits, last_merged_at: state.last_merged_at };
  await writeFileAtomic(file, JSON.stringify(body, null, 2) + '\n');
}

/** What `GET /tasks/{id}/partial-merge` answers: everything merged so far, the last commit. */
export function stateAsResponse(state: PartialMergeState): PartialMergeResponse {
  return {
    merged_files: state.merged_files,
    skipped_already_merged: [],
    uncommitted_files: [],
    conflicting_files: [],
    commit_sha: state.merge_commits[state.merge_commits.length - 1] ?? '',
  };
}
