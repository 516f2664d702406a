// The state commit's words for a change to a task (pure).
import type { Actor } from '../lib/route.ts';
import type { ChangeNote } from '../store/types.ts';
import type { Task } from './schema.ts';

/** The state commit's words for a change to a task: `claim "Fix login" (01jc…) by backend-3f2a`, with its actor. */
export function changeNote(action: string, task: Pick<Task, 'id' | 'title'>, who: Actor, detail?: string): ChangeNote {
  return { action, id: task.id, title: task.title, actor: who.actor, ...(detail ? { detail } : {}) };
}

/** The note of a state-machine operation: a claim names the session that holds it. */
export function noteFor(op: string, task: Pick<Task, 'id' | 'title'>, who: Actor, input: Record<string, unknown>): ChangeNote {
  const by = typeof input.claimed_by_session === 'string' ? `by ${input.claimed_by_session}` : undefined;
  return changeNote(op, task, who, by);
}
