import type { ObjectStore, TreeEntry } from './git-objects.ts';

// A folder of the state tree in memory: `oid` is null once it changed (fast-import writes the new
// trees), `entries` null until first needed (most of a 100k tree is never loaded).
interface Dir {
  oid: string | null;
  entries: Map<string, Node> | null;
}
type Node = { kind: 'file'; mode: string; type: TreeEntry['type']; oid: string } | { kind: 'dir'; dir: Dir };

/** The blob ids of the state tree between commits: loads folders on demand; says which writes change it. */
export class MemTree {
  private root: Dir;

  constructor(private readonly objects: ObjectStore, rootOid: string | null) {
    this.root = rootOid ? { oid: rootOid, entries: null } : { oid: null, entries: new Map() };
  }

  /** Point `path` (slash-separated, from the tree root) at blob `oid`; false when it already was. */
  async set(path: string, oid: string): Promise<boolean> {
    const parts = path.split('/');
    const name = parts.pop()!;
    const chain = await this.walk(parts, true);
    const leaf = chain.at(-1)!.entries!;
    const old = leaf.get(name);
    if (old?.kind === 'file' && old.oid === oid) return false;
    leaf.set(name, { kind: 'file', mode: old?.kind === 'file' ? old.mode : '100644', type: 'blob', oid });
    for (const d of chain) d.oid = null;
    return true;
  }

  /** Drop `path` from the tree; false when it was not there. */
  async remove(path: string): Promise<boolean> {
    const parts = path.split('/');
    const name = parts.pop()!;
    const chain = await this.walk(parts, false);
    const leaf = chain.at(-1);
    if (chain.length !== parts.length + 1 || leaf?.entries?.get(name)?.kind !== 'file') return false;
    leaf.entries.delete(name);
    for (const d of chain) d.oid = null;
    return true;
  }

  // The folders from the root down to `parts`, loading each; `create` adds missing ones.
  private async walk(parts: string[], create: boolean): Promise<Dir[]> {
    let dir = this.root;
    await this.load(dir);
    const chain = [dir];
    for (const seg of parts) {
      let node = dir.entries!.get(seg);
      if (node?.kind !== 'dir') {
        if (!create) return chain;
        node = { kind: 'dir', dir: { oid: null, entries: new Map() } };
        dir.entries!.set(seg, node);
      }
      dir = node.dir;
      await this.load(dir);
      chain.push(dir);
    }
    return chain;
  }

  private async load(dir: Dir): Promise<void> {
    if (dir.entries) return;
    const entries = new Map<string, Node>();
    for (const e of await this.objects.readTree(dir.oid!)) {
      entries.set(e.path, e.type === 'tree' ? { kind: 'dir', dir: { oid: e.oid, entries: null } } : { kind: 'file', mode: e.mode, type: e.type, oid: e.oid });
    }
    dir.entries = entries;
  }
}
