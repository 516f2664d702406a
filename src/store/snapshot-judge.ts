// The start's verdict on the board's snapshot (snapshot.ts): which records still match their files, from the
// blob ids the comparison with refs/sdd/state establishes (recover.ts). Pure.
import type { RefBlob } from './restore.ts';

/** Which records of a snapshot a start may use: the rest (`stale`) and the files to read (`read`), by path relative to `.sdd`. */
export interface SnapshotVerdict {
  /** The snapshot's identity (inode, size, mtime): the reader checks it is the file it read. */
  stamp: string;
  /** Paths of records whose file changed or is gone: not to be taken from the snapshot. */
  stale: string[];
  /** Files under the snapshot's prefix not vouched for by it (changed, or not in it): read them. */
  read: string[];
}

/** `see` every file on disk (path relative to `.sdd`, blob id), then `verdict`. */
export interface SnapshotJudge {
  see(rel: string, oid: string): void;
  verdict(): SnapshotVerdict;
}

/** The verdict from the snapshot's own index (path → blob id). Consumes `index`. */
export function snapshotJudge(snap: { stamp: string; prefix: string; index: Map<string, string> }): SnapshotJudge {
  const { stamp, prefix, index } = snap;
  const stale: string[] = [];
  const read: string[] = [];
  return {
    see(rel, oid) {
      if (!rel.startsWith(prefix)) return;
      const want = index.get(rel);
      if (want === undefined) read.push(rel);
      else {
        index.delete(rel);
        if (want !== oid) { stale.push(rel); read.push(rel); }
      }
    },
    verdict() {
      for (const rel of index.keys()) stale.push(rel); // not on disk
      return { stamp, stale, read };
    },
  };
}

/**
 * The snapshot holds the ref's folders: each folder it has records in has the git tree id the ref gives it,
 * and the ref has no other folder under `prefix`. Every record's blob id is then the ref's.
 */
export function sameFolders(snapshot: Readonly<Record<string, string>>, ref: ReadonlyMap<string, string>, prefix: string): boolean {
  for (const [folder, oid] of Object.entries(snapshot)) if (ref.get(folder) !== oid) return false;
  for (const folder of ref.keys()) if (folder.startsWith(prefix) && !Object.hasOwn(snapshot, folder)) return false;
  return true;
}

/**
 * The verdict without the snapshot's index, when it holds the ref's folders (sameFolders): a record's blob id is
 * the ref's, so `ref` (the comparison's listing, from which each file is deleted once seen: what is left is not
 * on disk) judges. At 100k tasks the index costs the scan thread ~0.3 s and ~15 MB (bench/README.md "start").
 */
export function refJudge(stamp: string, prefix: string, folders: ReadonlySet<string>, ref: ReadonlyMap<string, RefBlob>): SnapshotJudge {
  const stale: string[] = [];
  const read: string[] = [];
  const held = (rel: string) => folders.has(rel.slice(0, rel.lastIndexOf('/')));
  return {
    see(rel, oid) {
      if (!rel.startsWith(prefix)) return;
      const want = held(rel) ? ref.get(rel)?.oid : undefined;
      if (want === undefined) read.push(rel);
      else if (want !== oid) { stale.push(rel); read.push(rel); }
    },
    verdict() {
      for (const rel of ref.keys()) if (rel.startsWith(prefix) && held(rel)) stale.push(rel); // not on disk
      return { stamp, stale, read };
    },
  };
}
