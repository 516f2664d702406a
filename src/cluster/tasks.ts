// The cluster's only door to the board: what nodes hold, giving a donor's claimed task back, the node hooks.
import { DomainError } from '../lib/domain-error.ts';
import { HttpError, conflict } from '../lib/http-error.ts';
import type { NodeHooks, Tasks } from '../tasks/index.ts';

/** A task a node holds, with what the steal planner needs. */
export interface HeldTask {
  id: string;
  status: 'claimed' | 'in_progress';
  priority: number;
  claimed_at: string | null;
  /** The node's agent session on it (claimed_by_session). */
  session?: string | null;
}

/** What the cluster reads from and does to the board. */
export interface ClusterTasks {
  /** Claimed and in-progress tasks per node id (tasks claimed without a node are left out). */
  heldByNode(): Map<string, HeldTask[]>;
  /** Give a task back to open (node cleared, version + 1, audited) if `donor` still holds it claimed and not started; false otherwise. */
  returnToOpen(id: string, donor: string, reason: string): Promise<boolean>;
  /** Let the cluster refuse claims of cordoned, draining or unknown nodes and count fenced writes. */
  install(hooks: NodeHooks): void;
}

/** The door over the board's `Tasks` and the hook installer the tasks domain gives the server. */
export function clusterTasks(svc: Tasks, installHooks: (hooks: NodeHooks) => void): ClusterTasks {
  return {
    heldByNode() {
      const out = new Map<string, HeldTask[]>();
      for (const t of svc.list({ status: ['claimed', 'in_progress'] })) {
        if (!t.node_id) continue;
        const list = out.get(t.node_id) ?? [];
        list.push({ id: t.id, status: t.status as HeldTask['status'], priority: t.priority, claimed_at: t.claimed_at, session: t.claimed_by_session ?? null });
        out.set(t.node_id, list);
      }
      return out;
    },
    async returnToOpen(id, donor, reason) {
      const t = svc.get(id);
      if (!t) return false;
      try {
        // The check runs on the record under its lock: a task the donor started or gave up meanwhile stays as it is.
        await svc.apply(id, 'release', { reason }, { actor: 'cluster', tenant: t.tenant }, {
          check: (cur) => { if (cur.status !== 'claimed' || cur.node_id !== donor) throw conflict(`Task '${id}' is no longer claimed by node '${donor}'`); },
        });
        return true;
      } catch (err) {
        // Refused (no longer the donor's, changed meanwhile, gone): it stays as it is.
        if (err instanceof DomainError || (err instanceof HttpError && (err.status === 409 || err.status === 404))) return false;
        throw err;
      }
    },
    install: installHooks,
  };
}
