// Commit messages of refs/sdd/state and the start report: pure, so they are tested with plain values.
import type { Note, StartReport } from './types.ts';

/** Most changes named in a subject; the rest are counted (and listed in the body). */
export const MAX_NOTES = 20;
/** Titles are cut to this many characters in a message. */
export const MAX_TITLE = 60;
/** Most paths named in a recover message. */
export const MAX_RECOVER_PATHS = 10;
// The body lists what the subject left out, up to this many lines; trailers name at most this many actors.
const MAX_BODY_LINES = 200;
const MAX_ACTORS = 50;
const MAX_WORDS = 120;

/**
 * `3 changes: create "Add a health check" (01m8a…); claim "Fix login" (01m8b…) by backend-3f2a; progress ×24`
 * (repeats named once, progress-only changes grouped, cut at 20 with `… and N more`, the rest in the
 * body), then a `Svc-Actor:` trailer per distinct actor; `update N paths` without notes.
 */
export function commitMessage(notes: readonly Note[], paths: number): string {
  const items: (string | typeof PROGRESS)[] = [];
  const seen = new Set<string>();
  const actors: string[] = [];
  const progress: string[] = [];
  for (const note of notes) {
    const { text, actor, isProgress } = describe(note);
    if (actor && !actors.includes(actor) && actors.length < MAX_ACTORS) actors.push(actor);
    if (!text) continue;
    if (isProgress) {
      if (!progress.length) items.push(PROGRESS);
      progress.push(text);
    } else if (!seen.has(text)) {
      seen.add(text);
      items.push(text);
    }
  }
  const shown = items.map((i) => (i !== PROGRESS ? i : progress.length === 1 ? progress[0]! : `progress ×${progress.length}`));
  const total = seen.size + progress.length;
  const trailers = actors.map((a) => `Svc-Actor: ${a}`).join('\n');
  if (!shown.length) return [`update ${paths} path${paths === 1 ? '' : 's'}`, trailers].filter(Boolean).join('\n\n');
  const more = shown.length - MAX_NOTES;
  const subject = `${total > 1 ? `${total} changes: ` : ''}${shown.slice(0, MAX_NOTES).join('; ')}${more > 0 ? `; … and ${more} more` : ''}`;
  const rest = shown.slice(MAX_NOTES);
  const body = rest.slice(0, MAX_BODY_LINES).concat(rest.length > MAX_BODY_LINES ? [`… and ${rest.length - MAX_BODY_LINES} more`] : []).join('\n');
  return [subject, body, trailers].filter(Boolean).join('\n\n');
}

const PROGRESS = Symbol('progress');

// One note as message words: `action "title" (id) detail`, control characters escaped, title cut.
function describe(note: Note): { text: string; actor?: string; isProgress: boolean } {
  if (typeof note === 'string') {
    const text = clip(escapeControls(note.replace(/\s+/g, ' ').trim()), MAX_WORDS);
    return { text, isProgress: /^progress\b/.test(text) };
  }
  const words = [
    oneLine(note.action, 40),
    note.title !== undefined ? `"${quotable(note.title)}"` : '',
    note.id ? `(${oneLine(note.id, 40)})` : '',
    note.detail ? oneLine(note.detail, 80) : '',
  ];
  const actor = note.actor ? oneLine(note.actor, 80) : '';
  return { text: words.filter(Boolean).join(' '), ...(actor ? { actor } : {}), isProgress: note.action === 'progress' };
}

/** Control characters as visible escapes (`\n`, `\t`, `\u001b`) and backslashes doubled: one line, unambiguous. */
export function escapeControls(s: string): string {
  return s.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

// A title in a message's quotes: whitespace flattened, cut, escaped, its quotes escaped.
function quotable(title: string): string {
  if (plain(title) && !title.includes('"')) return clip(title, MAX_TITLE);
  return escapeControls(clip(title.replace(/\s+/g, ' ').trim(), MAX_TITLE)).replace(/"/g, '\\"');
}

// Whitespace flattened, escaped, cut.
function oneLine(s: string, max: number): string {
  return clip(plain(s) ? s : escapeControls(s.replace(/\s+/g, ' ').trim()), max);
}

// Printable ASCII without a backslash, two spaces running or a space at either end: flattening and escaping
// leave it as it is (ids, actions and actors always are; a commit names hundreds of changes).
const plain = (s: string): boolean => !/[^\x20-\x5b\x5d-\x7e]|\s\s|^\s|\s$/.test(s);

// At most `max` characters (code points, so no surrogate is split), the cut marked with `…`.
function clip(s: string, max: number): string {
  if (s.length <= max) return s; // no more code points than code units: nothing to cut, nothing to split
  const chars = [...s];
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}

/** `first commit of the board (N paths)` or `recover: restored N, committed M, deleted K (a, b, …)`. */
export function recoverMessage(r: StartReport): string {
  const paths = [...r.committed, ...r.deleted].sort();
  if (r.first) return `first commit of the board (${plural(paths.length, 'path')})`;
  const restored = r.restoredTasks + r.restoredOther;
  const counts = [restored ? `restored ${restored}` : '', `committed ${r.committed.length}`, r.deleted.length ? `deleted ${r.deleted.length}` : ''];
  const shown = paths.slice(0, MAX_RECOVER_PATHS).map((p) => escapeControls(p)).join(', ');
  return `recover: ${counts.filter(Boolean).join(', ')} (${shown}${paths.length > MAX_RECOVER_PATHS ? ', …' : ''})`;
}

/** The start's log line, in words: `state: restored 8 task files from refs/sdd/state (fetched board); committed 1 changed path`. */
export function startMessage(r: StartReport): string {
  if (r.first) return `state: first commit of the board (${plural(r.committed.length, 'file')})`;
  const parts: string[] = [];
  const files = [r.restoredTasks ? plural(r.restoredTasks, 'task file') : '', r.restoredOther ? plural(r.restoredOther, r.restoredTasks ? 'other file' : 'file') : ''].filter(Boolean);
  if (files.length) parts.push(`restored ${files.join(' and ')} from refs/sdd/state (${r.fetched ? 'fetched board' : 'missing on disk'})`);
  if (r.committed.length) parts.push(`committed ${plural(r.committed.length, 'changed path')}`);
  if (r.deleted.length) parts.push(`committed ${plural(r.deleted.length, 'journaled deletion')}`);
  return `state: ${parts.length ? parts.join('; ') : 'the files match refs/sdd/state'}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
