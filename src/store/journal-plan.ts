// Pure rules of the journal (journal.ts, journal-replay.ts): what a line holds, what replay writes and appends.
import type { Content } from './records/cas.ts';

/**
 * One journal line, parsed: every write of one store operation, paths relative to `.sdd`. `w`: files and
 * their full new text (null: deleted); `a`: lines appended to files (no newline), audit records signed already.
 */
export interface JournalLine {
  w?: [path: string, text: string | null][];
  a?: [path: string, line: string][];
}

/**
 * The journal text of one operation (one line, no newline). A record goes in as its compact JSON and an
 * appended line that is a JSON object as that object, not as escaped strings: no escaping to do, a third
 * fewer bytes. A text that is no record goes in as a string; replay renders each back to the same bytes.
 */
export function encodeOp(writes: readonly [string, Content | null][], appends: readonly [string, string][]): string {
  const out: string[] = [];
  encodeOpInto(out, writes, appends);
  return out.join('');
}

/**
 * encodeOp's text as pieces pushed onto `out`: a record's JSON and an appended line are pushed as they are
 * (flat strings already), so a writer copies them straight into its buffer and no joined copy is made.
 * `path` maps each path as it is written (the journal's absolute paths to paths relative to `.sdd`).
 */
export function encodeOpInto(out: string[], writes: readonly (readonly [string, Content | null])[], appends: readonly (readonly [string, string, ...unknown[]])[], path: (p: string) => string = (p) => p): void {
  out.push('{"w":[');
  for (let i = 0; i < writes.length; i++) {
    const [p, c] = writes[i]!;
    out.push(`${i ? ',' : ''}[${JSON.stringify(path(p))},`, c === null ? 'null' : typeof c === 'string' ? JSON.stringify(c) : c.json, ']');
  }
  out.push('],"a":[');
  for (let i = 0; i < appends.length; i++) {
    const [p, l] = appends[i]!;
    out.push(`${i ? ',' : ''}[${JSON.stringify(path(p))},`, l.startsWith('{') ? l : JSON.stringify(l), ']');
  }
  out.push(']}');
}

/**
 * The well-formed lines of a journal file, in order; a torn or hand-edited line is skipped whole, so
 * an operation is replayed entirely or not at all. Lines of the previous format (`{p, t}`) read as one write.
 */
export function parseJournal(text: string): JournalLine[] {
  const out: JournalLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let v: unknown;
    try { v = JSON.parse(raw); } catch { continue; }
    const line = asLine(v);
    if (line) out.push(line);
  }
  return out;
}

function asLine(v: unknown): JournalLine | undefined {
  if (!isObject(v)) return undefined;
  const { w, a, p, t } = v as Record<string, unknown>;
  if (typeof p === 'string') return isWrite([p, t]) ? { w: [[p, t as string | null]] } : undefined;
  const ws = w === undefined ? [] : w;
  const as = a === undefined ? [] : a;
  if (!Array.isArray(ws) || !Array.isArray(as) || !ws.every(isWrite) || !as.every(isAppend)) return undefined;
  // A record back to its file text, an object line back to its JSON text: the bytes the server wrote.
  return {
    w: ws.map(([path, t]) => [path as string, isObject(t) ? JSON.stringify(t, null, 2) + '\n' : (t as string | null)]),
    a: as.map(([path, l]) => [path as string, isObject(l) ? JSON.stringify(l) : (l as string)]),
  };
}

const isObject = (x: unknown): boolean => x !== null && typeof x === 'object' && !Array.isArray(x);
const isWrite = (x: unknown): boolean => Array.isArray(x) && x.length === 2 && insideSdd(x[0]) && (typeof x[1] === 'string' || x[1] === null || isObject(x[1]));
const isAppend = (x: unknown): boolean => Array.isArray(x) && x.length === 2 && insideSdd(x[0]) && ((typeof x[1] === 'string' && !x[1].includes('\n')) || isObject(x[1]));

// Paths come from a file anyone on the box could edit: stay inside `.sdd`.
function insideSdd(p: unknown): boolean {
  return typeof p === 'string' && p.length > 0 && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '' || s === '.');
}

/** Replay's input: the last text per path (in order of the last write) and every journaled line per file, in order. */
export function replayPlan(lines: readonly JournalLine[]): { texts: Map<string, string | null>; appends: Map<string, string[]> } {
  const texts = new Map<string, string | null>();
  const appends = new Map<string, string[]>();
  for (const l of lines) {
    for (const [p, t] of l.w ?? []) { texts.delete(p); texts.set(p, t); }
    for (const [p, line] of l.a ?? []) {
      const q = appends.get(p) ?? [];
      if (!q.length) appends.set(p, q);
      q.push(line);
    }
  }
  return { texts, appends };
}

/**
 * The journaled `lines` of a file (oldest first) that its end lacks. Lines reach a file in journal
 * order and an earlier journal is dropped only once all its lines are in their files, so the file ends
 * with the first k of them, maybe followed by a torn piece of the next: the largest such k is taken.
 * `tail` is the file's last bytes (`whole`: from its start); `seal`: it ends inside a line.
 */
export function missingLines(tail: string, whole: boolean, lines: readonly string[]): { missing: string[]; seal: boolean } {
  const cut = tail.lastIndexOf('\n');
  const seal = tail.length > 0 && cut < tail.length - 1;
  const body = cut < 0 ? [] : tail.slice(0, cut).split('\n');
  if (!whole && cut >= 0) body.shift(); // may start inside a line
  for (let i = Math.max(0, body.length - lines.length); i < body.length; i++) {
    if (body[i] !== lines[0]) continue;
    const k = body.length - i;
    if (body.slice(i).every((l, j) => l === lines[j])) return { missing: lines.slice(k), seal };
  }
  return { missing: [...lines], seal };
}
