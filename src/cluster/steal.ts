// The steal planner (pure): which overloaded nodes give claimed tasks back, for which idle nodes, how many.
import type { NodeStatus } from './schema.ts';
import type { HeldTask } from './tasks.ts';

/** INTERFACE.md Limits: a donor has more than 5 queued, a receiver at least 2 free slots, at most 3 tasks per call. */
export const STEAL_LIMITS = { overload: 5, idle: 2, maxPerCall: 3 } as const;
export type StealLimits = { overload: number; idle: number; maxPerCall: number };

/** What the planner knows of a node. */
export interface StealNode {
  id: string;
  status: NodeStatus;
  availableSlots: number;
  /** Tasks the node holds claimed and not started: the only ones that can move. */
  claimed: number;
}

/** Move `count` claimed tasks of `donor` back to open, for `receiver` to pick up. */
export interface PlannedMove {
  donor: string;
  receiver: string;
  count: number;
}

/**
 * Donors: nodes (any status: an offline node's queue may move too) whose queue depth (reported, else their
 * claimed count) is above `overload`; they give at most the excess and never more than they hold claimed.
 * Receivers: online nodes with at least `idle` free slots, never a donor. Deepest donors and freest receivers
 * first (ties in registration order); a receiver drops out once it has fewer than `idle` slots left.
 */
export function planSteal(nodes: readonly StealNode[], depths: Readonly<Record<string, number>>, limits: StealLimits = STEAL_LIMITS): PlannedMove[] {
  const depthOf = (n: StealNode) => (Object.hasOwn(depths, n.id) ? depths[n.id]! : n.claimed);
  const donors = nodes
    .filter((n) => depthOf(n) > limits.overload)
    .map((n) => ({ id: n.id, depth: depthOf(n), excess: Math.min(depthOf(n) - limits.overload, n.claimed) }))
    .filter((d) => d.excess > 0)
    .sort((a, b) => b.depth - a.depth);
  const donorIds = new Set(donors.map((d) => d.id));
  const receivers = nodes
    .filter((n) => n.status === 'ONLINE' && !donorIds.has(n.id) && depthOf(n) <= limits.overload && n.availableSlots >= limits.idle)
    .map((n) => ({ id: n.id, slots: n.availableSlots }))
    .sort((a, b) => b.slots - a.slots);
  const plan: PlannedMove[] = [];
  let budget = limits.maxPerCall;
  for (const d of donors) {
    for (const r of receivers) {
      if (budget <= 0 || d.excess <= 0) break;
      if (r.slots < limits.idle) continue;
      const count = Math.min(d.excess, r.slots, budget);
      plan.push({ donor: d.id, receiver: r.id, count });
      d.excess -= count; r.slots -= count; budget -= count;
    }
  }
  return plan;
}

/** The donor's tasks that move: claimed, never started, most urgent first (priority, then oldest claim). */
export function pickTasks(held: readonly HeldTask[], count: number): string[] {
  return held
    .filter((t) => t.status === 'claimed')
    .sort((a, b) => a.priority - b.priority || String(a.claimed_at).localeCompare(String(b.claimed_at)) || a.id.localeCompare(b.id))
    .slice(0, Math.max(0, count))
    .map((t) => t.id);
}
