import type { Task, TaskCreate } from './schema.ts';

/** What a waiting parent becomes once its children have settled. */
export type Rollup = { to: 'done'; summary: string } | { to: 'blocked'; reason: string; children: string[] };

const SUCCESS = new Set<Task['status']>(['done', 'closed']);
const UNSUCCESSFUL = new Set<Task['status']>(['failed', 'refused', 'cancelled']);

/**
 * Decide a waiting parent's roll-up: done when every child is done/closed, blocked (naming the children
 * that failed, refused or were cancelled) when every child has settled and one did not succeed, else null.
 */
export function parentRollup(parent: Task, children: readonly Task[]): Rollup | null {
  if (parent.status !== 'waiting_for_subtasks' || children.length === 0) return null;
  // A done child counts as settled here, so a mix of done and failed children cannot strand the parent.
  if (!children.every((c) => SUCCESS.has(c.status) || UNSUCCESSFUL.has(c.status))) return null;
  const bad = children.filter((c) => UNSUCCESSFUL.has(c.status));
  if (bad.length === 0) return { to: 'done', summary: `Completed via ${children.length} subtasks` };
  const names = bad.map((c) => `${c.id} (${c.status})`).join(', ');
  return { to: 'blocked', reason: `Subtasks did not succeed: ${names}`, children: bad.map((c) => c.id) };
}

/** True when self-create should move this parent to waiting_for_subtasks (op 'split'). */
export function parentShouldSplit(parent: Pick<Task, 'status'>): boolean {
  return parent.status === 'open' || parent.status === 'claimed' || parent.status === 'in_progress';
}

/** A subtask's create body with what it inherits from its parent: cell_id and parent_session_id (tenant is the parent's). */
export function inheritFromParent<T extends TaskCreate>(create: T, parent: Task): T & { parent_task_id: string; tenant: string } {
  return {
    ...create,
    parent_task_id: parent.id,
    tenant: parent.tenant,
    cell_id: create.cell_id ?? parent.cell_id,
    parent_session_id: create.parent_session_id ?? parent.parent_session_id,
  };
}

/** Ids of every descendant of `rootId` through parent_task_id, breadth first (cycle-safe). */
export function descendants(rootId: string, childrenOf: (id: string) => readonly Task[]): string[] {
  const out: string[] = [];
  const seen = new Set([rootId]);
  for (let queue = [rootId], i = 0; i < queue.length; i++) {
    for (const c of childrenOf(queue[i]!)) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      out.push(c.id);
      queue.push(c.id);
    }
  }
  return out;
}
