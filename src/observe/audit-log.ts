// The audit log written directly, each record durable before it is answered: a CLI with no server
// running, and stores of a shared tree (tools, tests). A server signs records into its journal instead.
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { appendLog, type AppendLog } from '../store/append-log.ts';
import type { Faults } from '../store/disk.ts';
import type { SddLayout } from '../store/layout.ts';
import { openAuditChain, type AuditChain, type AuditEntry, type AuditRecord, type AuditTail } from './audit.ts';

export interface AuditLog {
  /** Load the key and recover the tail now, so a bad key fails early; returns the tail. */
  open(): Promise<AuditTail>;
  /** Sign and append one record; resolves once it is on disk (write + datasync). */
  append(entry: AuditEntry): Promise<AuditRecord>;
  /** Wait for pending appends and close the segment; later appends reject. */
  close(): Promise<void>;
}
export interface AuditDeps {
  layout: SddLayout;
  clock: Clock;
  log: Logger;
  /** Called with the segment's absolute path after each durable append (mark dirty for the state commit). */
  onAppend?: (abs: string) => void;
  faults?: Faults;
}

type Pending = { entry: AuditEntry; resolve(r: AuditRecord): void; reject(err: unknown): void };

/**
 * Appends from this process form one chain, in call order: those that arrive while a batch is written
 * are signed and written together (one datasync). After a refused batch the chain is read again from
 * the segments, so a record that did not land is never linked to.
 */
export function createAuditLog(deps: AuditDeps): AuditLog {
  let chain: AuditChain | undefined;
  let segment: { abs: string; log: AppendLog } | undefined;
  let queue: Pending[] = [];
  let running: Promise<void> | undefined;
  let closed = false;

  const logFor = async (abs: string) => {
    if (segment?.abs === abs) return segment.log;
    await segment?.log.close();
    segment = { abs, log: appendLog(abs, { faults: deps.faults }) };
    return segment.log;
  };
  const writeBatch = async (batch: Pending[]) => {
    try {
      chain ??= await openAuditChain(deps);
      const sealed = batch.map((p) => chain!.seal(p.entry));
      // Consecutive records of one segment in one write; a batch crosses midnight at most once.
      for (let i = 0; i < sealed.length;) {
        const abs = sealed[i]!.abs;
        let j = i;
        while (j < sealed.length && sealed[j]!.abs === abs) j++;
        await (await logFor(abs)).append(sealed.slice(i, j).map((s) => s.line + '\n').join(''));
        for (; i < j; i++) deps.onAppend?.(abs);
      }
      batch.forEach((p, k) => p.resolve(sealed[k]!.record));
    } catch (err) {
      chain = undefined;
      for (const p of batch) p.reject(err);
    }
  };
  const run = async () => {
    while (queue.length) await writeBatch(queue.splice(0));
    running = undefined;
  };

  return {
    async open() {
      if (closed) throw new Error('audit log closed');
      chain ??= await openAuditChain(deps);
      return chain.tail;
    },
    append(entry) {
      if (closed) return Promise.reject(new Error('audit log closed'));
      return new Promise<AuditRecord>((resolve, reject) => {
        queue.push({ entry, resolve, reject });
        running ??= run();
      });
    },
    async close() {
      closed = true;
      await running;
      await segment?.log.close();
      segment = undefined;
    },
  };
}
