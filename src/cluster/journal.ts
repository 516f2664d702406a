// The claim journal (.sdd/cluster/claim_journal.jsonl): its head and hashes in memory, gossip ingested in order.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import type { RecordStore } from '../store/types.ts';
import type { ClusterMetrics } from './metrics.ts';
import { forkRecord, GENESIS, judge, type JournalLine } from './receipts.ts';
import type { ClaimReceipt, GossipResult } from './schema.ts';
import type { ClusterAudit } from './service.ts';

export interface ClaimJournalDeps {
  store: RecordStore;
  file: string;
  clock: Clock;
  log: Logger;
  metrics: ClusterMetrics;
  audit: ClusterAudit;
  /** The registered Ed25519 key (base64) of a node, or null. */
  keyOf: (nodeId: string) => string | null;
}

/** The answer to one gossip push. */
export interface GossipAnswer {
  head: string;
  accepted: number;
  results: GossipResult[];
  forked: boolean;
}

/** Receipts pushed by nodes, judged against the local head one by one; the first fork ends the push. */
export class ClaimJournal {
  private head = GENESIS;
  private index = new Map<string, number>();
  private readonly one = new KeyedMutex();

  constructor(private readonly deps: ClaimJournalDeps) {}

  /** Read the journal (a torn last line is skipped): head and known hashes. Returns the number of entries. */
  async load(): Promise<number> {
    const lines = await this.deps.store.readJsonl<JournalLine>(this.deps.file);
    for (const l of lines) if (typeof l?.entry_hash === 'string') this.remember(l.entry_hash);
    return this.index.size;
  }

  /** The current head (`sha256:` + 64 zeros while empty). */
  currentHead(): string { return this.head; }

  /** Judge and append each receipt in order; stops at the first fork, after writing the fork record. */
  ingest(receipts: readonly ClaimReceipt[], actor: string): Promise<GossipAnswer> {
    return this.one.run('journal', async () => {
      const results: GossipResult[] = [];
      let forked = false;
      for (const r of receipts) {
        const verdict = judge(r, { head: this.head, index: this.index }, this.deps.keyOf);
        results.push(verdict);
        this.deps.metrics.gossip(verdict.status);
        if (verdict.status === 'applied') await this.append(r, `claim receipt ${r.kind} from node ${r.node_id}`);
        if (verdict.status === 'forked') {
          await this.fork(r, actor);
          forked = true;
          break;
        }
      }
      return { head: this.head, accepted: results.filter((x) => x.status === 'applied').length, results, forked };
    });
  }

  private async fork(r: ClaimReceipt, actor: string): Promise<void> {
    const record = forkRecord(r, { head: this.head, index: this.index }, this.deps.clock.iso());
    this.deps.log.warn(`claim journal fork: receipt ${r.entry_hash} of node ${r.node_id} links to ${r.prev_entry_hash}, not to the head ${this.head}`);
    await this.append(record, `claim journal fork by node ${r.node_id}`);
    await this.deps.audit.append({ actor, action: 'cluster.claims.fork', resource_type: 'claim_journal', resource_id: r.entry_hash, details: { node_id: r.node_id, prev_entry_hash: r.prev_entry_hash, local_head: record.fork_local_head } });
  }

  private async append(line: Record<string, unknown> & { entry_hash: string }, note: string): Promise<void> {
    await this.deps.store.appendJsonl(this.deps.file, line, note);
    this.remember(line.entry_hash);
  }

  private remember(hash: string): void {
    this.index.set(hash, this.index.size);
    this.head = hash;
  }
}
