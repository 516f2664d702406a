// The audit chain against its own history: a record, once committed into refs/sdd/state, never changes.
// Whoever holds the key can rewrite a record and recompute the chain; the state history still holds the
// original, so the rewrite is found and named with the commit that first held the record.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Git } from '../store/git-cli.ts';
import type { SddLayout } from '../store/layout.ts';
import { createBlobReader, STATE_REF, type BlobReader } from '../store/index.ts';

/** A committed record that differs now (or in a later commit), or is gone. */
export interface AuditRewrite {
  file: string;
  line: number;
  seq: number | null;
  /** The commit that first held the record as it was committed. */
  commit: string;
  /** Where it differs: a later commit, or 'working file'. */
  foundIn: string;
  detail: string;
}

/** A walk over one segment's versions, oldest first (pure: bytes in, verdict out). */
export class SegmentHistory {
  private held = Buffer.alloc(0);
  private length = 0;
  private firsts: { end: number; commit: string }[] = [];
  broken: AuditRewrite | null = null;
  constructor(readonly file: string) {}

  /** The segment as `commit` wrote it (null: the commit deleted it). */
  add(commit: string, content: Uint8Array | null): void {
    if (this.broken) return;
    this.compare(content, commit, false);
    if (this.broken || !content) return;
    const complete = completeLines(content);
    if (complete.length > this.length) {
      this.append(complete.subarray(this.length));
      this.firsts.push({ end: this.length, commit });
    }
  }

  /** The segment on disk now (null: missing); it may hold records not committed yet. */
  finish(current: Uint8Array | null): AuditRewrite | null {
    if (!this.broken) this.compare(current, 'working file', true);
    return this.broken;
  }

  // Every committed record must be there, byte for byte; only the torn tail of a version is not a record.
  private compare(content: Uint8Array | null, where: string, current: boolean): void {
    if (this.length === 0) return;
    const mine = this.held.subarray(0, this.length);
    if (!content) { this.fail(0, where, current ? 'the segment file is missing' : 'the commit deleted the segment'); return; }
    const complete = completeLines(content);
    const n = Math.min(complete.length, this.length);
    if (Buffer.compare(complete.subarray(0, n), mine.subarray(0, n)) !== 0) {
      let p = 0;
      while (complete[p] === mine[p]) p++;
      this.fail(p, where, 'the record differs from the committed one');
    } else if (complete.length < this.length) {
      this.fail(complete.length, where, 'the record is missing');
    }
  }

  private fail(pos: number, foundIn: string, detail: string): void {
    const mine = this.held.subarray(0, this.length);
    const start = mine.lastIndexOf(0x0a, pos - 1) + 1;
    const end = mine.indexOf(0x0a, start);
    const line = countLines(mine.subarray(0, start)) + 1;
    const commit = this.firsts.find((f) => f.end > start)?.commit ?? '';
    this.broken = { file: this.file, line, seq: seqOf(mine.subarray(start, end < 0 ? undefined : end)), commit, foundIn, detail };
  }

  private append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.held.length) {
      const grown = Buffer.alloc(Math.max(this.held.length * 2, this.length + bytes.length, 4096));
      this.held.copy(grown, 0, 0, this.length);
      this.held = grown;
    }
    this.held.set(bytes, this.length);
    this.length += bytes.length;
  }
}

const completeLines = (b: Uint8Array): Buffer => {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return buf.subarray(0, buf.lastIndexOf(0x0a) + 1);
};
const countLines = (b: Buffer): number => { let n = 0; for (let i = b.indexOf(0x0a); i >= 0; i = b.indexOf(0x0a, i + 1)) n++; return n; };
function seqOf(line: Buffer): number | null {
  try {
    const seq = (JSON.parse(line.toString('utf8')) as { seq?: unknown }).seq;
    return Number.isInteger(seq) ? (seq as number) : null;
  } catch {
    return null;
  }
}

/** The versions of every audit segment in refs/sdd/state, oldest first (`null` oid: deleted); null without the ref. */
export async function segmentVersions(git: Git): Promise<Map<string, { commit: string; oid: string | null }[]> | null> {
  const r = await git.run(['log', '--reverse', '--format=%x00%H', '--raw', '--no-abbrev', '--no-renames', STATE_REF, '--', '.sdd/audit/'], { allowFail: true });
  if (r.code !== 0) return null;
  const out = new Map<string, { commit: string; oid: string | null }[]>();
  for (const block of r.stdout.split('\0').slice(1)) {
    const [commit = '', ...lines] = block.split('\n');
    for (const l of lines) {
      const m = /^:\d+ \d+ [0-9a-f]+ ([0-9a-f]+) ([AMD])\S*\t\.sdd\/audit\/(\d{4}-\d{2}-\d{2}\.jsonl)$/.exec(l);
      if (!m) continue;
      const list = out.get(m[3]!) ?? [];
      list.push({ commit, oid: m[2] === 'D' ? null : m[1]! });
      out.set(m[3]!, list);
    }
  }
  return out;
}

/** What the history check did. */
export interface AuditHistoryResult {
  /** False when there is no refs/sdd/state to compare with. */
  checked: boolean;
  segments: number;
  versions: number;
  firstRewritten?: AuditRewrite;
}

/** Check every segment against its history in refs/sdd/state; `workingFiles: false` skips the files on disk (a clone without them). */
export async function verifyAuditHistory(deps: { git: Git; layout: SddLayout }, opts: { workingFiles?: boolean } = {}): Promise<AuditHistoryResult> {
  const history = await segmentVersions(deps.git);
  if (!history) return { checked: false, segments: 0, versions: 0 };
  const blobs = createBlobReader(deps.git.root);
  try {
    let versions = 0;
    for (const name of [...history.keys()].sort()) {
      const walk = new SegmentHistory(name);
      for (const v of history.get(name)!) {
        versions++;
        walk.add(v.commit, v.oid ? await readBlob(blobs, v.oid) : null);
        if (walk.broken) return { checked: true, segments: history.size, versions, firstRewritten: walk.broken };
      }
      if (opts.workingFiles === false) continue;
      const current = await readFile(join(deps.layout.auditDir, name)).catch(() => null);
      const broken = walk.finish(current);
      if (broken) return { checked: true, segments: history.size, versions, firstRewritten: broken };
    }
    return { checked: true, segments: history.size, versions };
  } finally {
    blobs.close();
  }
}

// A blob the ref's history names: missing means a broken repository, not an empty segment.
async function readBlob(blobs: BlobReader, oid: string): Promise<Buffer> {
  const data = await blobs.read(oid);
  if (!data) throw new Error(`git: blob ${oid} of ${STATE_REF} is missing`);
  return data;
}

/** One line for people: `.sdd/audit/<file> line 7 (seq 42) differs in the working file from commit abc… that first held it`. */
export function formatRewrite(r: AuditRewrite): string {
  const where = r.foundIn === 'working file' ? 'the working file' : `commit ${r.foundIn.slice(0, 12)}`;
  return `.sdd/audit/${r.file} line ${r.line}${r.seq === null ? '' : ` (seq ${r.seq})`}: ${r.detail} in ${where}; first committed in ${r.commit.slice(0, 12)}`;
}

/** The audit segments as refs/sdd/state's tip holds them (a clone that has the ref but not the files); [] without the ref. */
export async function segmentsAtTip(git: Git): Promise<{ name: string; text: string }[]> {
  const r = await git.run(['ls-tree', '-z', STATE_REF, '--', '.sdd/audit/'], { allowFail: true });
  if (r.code !== 0) return [];
  const blobs = createBlobReader(git.root);
  const out: { name: string; text: string }[] = [];
  try {
    for (const entry of r.stdout.split('\0')) {
      const m = /^\d+ blob ([0-9a-f]+)\t\.sdd\/audit\/(\d{4}-\d{2}-\d{2}\.jsonl)$/.exec(entry);
      if (m) out.push({ name: m[2]!, text: (await readBlob(blobs, m[1]!)).toString('utf8') });
    }
  } finally {
    blobs.close();
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}
