// Runs a steal: plan from the registry and the board, give the chosen claimed tasks back to open, audit.
import { KeyedMutex } from '../lib/mutex.ts';
import type { Principal } from '../lib/route.ts';
import type { ClusterMetrics } from './metrics.ts';
import { statusOf } from './registry.ts';
import type { StealResponse } from './schema.ts';
import type { ClusterAudit, ClusterService } from './service.ts';
import { pickTasks, planSteal, STEAL_LIMITS } from './steal.ts';
import type { ClusterTasks } from './tasks.ts';

export interface StealerDeps {
  service: ClusterService;
  tasks: ClusterTasks;
  audit: ClusterAudit;
  metrics: ClusterMetrics;
}

/** POST /cluster/steal (and its RPC): one steal at a time, at most 3 tasks per call. */
export function createStealer(deps: StealerDeps): (depths: Readonly<Record<string, number>>, who: Principal) => Promise<StealResponse> {
  const one = new KeyedMutex();
  return (depths, who) => one.run('steal', async () => {
    const held = deps.tasks.heldByNode();
    const nodes = deps.service.entries().map((e) => ({
      id: e.id, status: statusOf(e), availableSlots: e.capacity.available_slots,
      claimed: (held.get(e.id) ?? []).filter((t) => t.status === 'claimed').length,
    }));
    const actions: StealResponse['actions'] = [];
    const taken = new Set<string>();
    for (const move of planSteal(nodes, depths, STEAL_LIMITS)) {
      const ids = pickTasks((held.get(move.donor) ?? []).filter((t) => !taken.has(t.id)), move.count);
      const moved: string[] = [];
      for (const id of ids) {
        taken.add(id);
        // A task the donor started (or gave up) since the plan stays where it is.
        if (await deps.tasks.returnToOpen(id, move.donor, `stolen from node ${move.donor} for node ${move.receiver}`)) moved.push(id);
      }
      if (moved.length) actions.push({ donor: move.donor, receiver: move.receiver, task_ids: moved });
    }
    const total = actions.reduce((n, a) => n + a.task_ids.length, 0);
    if (total) {
      deps.metrics.stolen(total);
      await deps.audit.append({ actor: who.actor, action: 'cluster.steal', resource_type: 'cluster', resource_id: null, details: { actions, total } });
    }
    return { actions, total };
  });
}
