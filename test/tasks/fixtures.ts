import { newTask, type Task, type TaskCreate } from '../../src/tasks/schema.ts';

export const T0 = '2026-01-01T00:00:00.000Z';

/** A task built through newTask, then overridden (status, deps, …), with an id derived from `n`. */
export function task(id: string, over: Partial<Task> = {}, create: Partial<TaskCreate> = {}): Task {
  return { ...newTask({ title: `task ${id}`, ...create }, { id, now: over.created_at ?? T0, tenant: 'default' }), ...over };
}

/** ISO time `s` seconds after T0. */
export const at = (s: number): string => new Date(Date.parse(T0) + s * 1000).toISOString();
