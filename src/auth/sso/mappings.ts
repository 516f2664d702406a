// Group → role mappings in .sdd/auth/group-mappings.json: committed with the state (reviewable policy).
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SddLayout } from '../../store/layout.ts';
import { writeFileAtomic } from '../../store/atomic.ts';
import { stableStringify } from '../../store/records/cas.ts';
import { checkMappings, type GroupMapping } from './policy.ts';

interface MappingsFile { version: number; mappings: GroupMapping[] }

/** The mapping file's current list, in memory; written through to disk and the state commit. */
export class GroupMappings {
  private list: GroupMapping[] = [];
  private version = 0;
  constructor(
    private readonly layout: SddLayout,
    /** Called after each write (the committer takes the file into refs/sdd/state). */
    private readonly onWrite: (abs: string, text: string, note: string) => void = () => {},
  ) {}

  /** Read the file (absent = no mappings); a malformed file throws naming it. */
  async load(): Promise<GroupMapping[]> {
    const path = this.layout.groupMappings;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.list;
      throw e;
    }
    try {
      const f = JSON.parse(text) as Partial<MappingsFile>;
      if (!Array.isArray(f.mappings)) throw new Error('expected {"mappings": [{"group", "role"}]}');
      this.list = checkMappings(f.mappings.map((m) => ({ group: String(m.group), role: String(m.role) })));
      this.version = Number.isInteger(f.version) ? Number(f.version) : 0;
    } catch (e) {
      throw new Error(`${path}: ${(e as Error).message}`);
    }
    return this.list;
  }

  get current(): GroupMapping[] {
    return this.list;
  }

  /** Replace every mapping (already checked) and write the file. */
  async replace(next: GroupMapping[], note: string): Promise<void> {
    const path = this.layout.groupMappings;
    const text = stableStringify({ version: this.version + 1, mappings: next });
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, text);
    this.version += 1;
    this.list = next;
    this.onWrite(path, text, note);
  }
}
