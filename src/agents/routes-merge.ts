import { Type } from '../lib/typebox.ts';
import type { Clock } from '../lib/clock.ts';
import { conflict, notFound, unprocessable } from '../lib/http-error.ts';
import { defineRoute, type Route } from '../lib/route.ts';
import type { Git } from '../store/git-cli.ts';
import { assertTaskId, isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';
import { PartialMergeRequest, PartialMergeResponse, TaskIdParams, type Task, type Tasks } from '../tasks/index.ts';
import { readMergeState, stateAsResponse } from './merge-state.ts';
import { partialMerge } from './partial-merge.ts';
import { readOwner } from './session-owner.ts';
import type { SessionRecord } from './sessions.ts';

/** What the partial-merge routes need. */
export interface MergeRouteDeps {
  svc: Tasks;
  git: Git;
  layout: SddLayout;
  clock: Clock;
  /** The branch partial merges go into. */
  baseBranch: () => Promise<string>;
  /** Live sessions (the orchestrator's); sessions it no longer holds are known by their owner file. */
  sessions?: () => readonly Pick<SessionRecord, 'session_id' | 'task_id' | 'tenant'>[];
}

/**
 * The session svc created for `task` (orchestrator or worker), or null. `claimed_by_session` alone is
 * client-chosen at claim time, so it must name a session whose record or owner file says this task.
 */
async function ownSession(deps: MergeRouteDeps, task: Task): Promise<string | null> {
  const sid = task.claimed_by_session;
  if (!sid || !isValidId(sid)) return null;
  const live = deps.sessions?.().find((s) => s.session_id === sid);
  const owner = live ?? (await readOwner(deps.layout, sid));
  return owner && owner.task_id === task.id && owner.tenant === task.tenant ? sid : null;
}

const ErrorBody = Type.Object({ detail: Type.String() });
const E = (description: string) => ({ description, schema: ErrorBody });

/** `POST|GET /tasks/{task_id}/partial-merge`: merge named committed files of the active session early. */
export function partialMergeRoutes(deps: MergeRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/partial-merge', operationId: 'partial_merge', summary: 'Merge named committed files of the task\'s session branch into the base', tags: ['agents'], access: 'task', taskScope: 'own',
      params: TaskIdParams, body: PartialMergeRequest,
      responses: { 200: { description: 'What was merged', schema: Type.Ref(PartialMergeResponse) }, 404: E('Task not found'), 409: E('Task not in progress, no active session, or the checkout has changes to target files') },
      handler: async (ctx) => {
        const id = assertTaskId(ctx.params.task_id);
        const task = deps.svc.visible(id, ctx.who.tenant);
        if (task.status !== 'in_progress' || !task.claimed_by_session) throw conflict(`Task '${id}' is not in progress with an active session (state '${task.status}')`);
        const sid = await ownSession(deps, task);
        if (!sid) throw conflict(`Task '${id}' is claimed by '${String(task.claimed_by_session).slice(0, 100)}', not by a session svc started for it; only such a session's branch can be merged`);
        const r = await partialMerge(deps, { sessionId: sid, base: await deps.baseBranch(), files: ctx.body.files, ...(ctx.body.message ? { message: ctx.body.message } : {}) });
        if (r.status === 'refused') throw conflict(r.detail, { files: r.files });
        if (r.status === 'invalid') throw unprocessable(r.detail);
        const { status: _s, ...body } = r;
        return { task_id: id, session_id: sid, ...body, commit_sha: body.commit_sha || null };
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/partial-merge', operationId: 'partial_merge_state', summary: 'Cumulative partial-merge state of the task\'s active session', tags: ['agents'], access: 'read', taskScope: 'own',
      params: TaskIdParams,
      responses: { 200: { description: 'Merged so far', schema: Type.Ref(PartialMergeResponse) }, 404: E('Task not found or no session') },
      handler: async (ctx) => {
        const id = assertTaskId(ctx.params.task_id);
        const task = deps.svc.visible(id, ctx.who.tenant);
        const sid = await ownSession(deps, task);
        if (!sid) throw notFound(`Task '${id}' has no session started by svc`);
        const body = stateAsResponse(await readMergeState(deps.layout, sid));
        return { task_id: id, session_id: sid, ...body, commit_sha: body.commit_sha || null };
      },
    }),
  ];
}
