import { Type, type TSchema } from '../lib/typebox.ts';
import { forbidden, unprocessable } from '../lib/http-error.ts';
import { defineRoute, reply, type Route, type RouteContext } from '../lib/route.ts';
import { claimBatch, claimNext, claimOne } from './claims.ts';
import { createBatch, createTask, selfCreate } from './create.ts';
import { cancelTask, completeTask, finish, finishThenNext } from './lifecycle.ts';
import { reportProgress } from './progress.ts';
import * as S from './schema.ts';
import type { Actor, TaskService } from './service.ts';

const E = (description: string) => ({ description, schema: ErrorBody });
export const ErrorBody = Type.Object({ detail: Type.String() }, { $id: 'ErrorBody', additionalProperties: true });
const TASK = { 200: { description: 'The task', schema: Type.Ref(S.Task) } };
const ERRS = { 404: E('Task not found'), 409: E('Transition not allowed from the current state') };

/** The caller's actor and tenant: `ctx.who`, resolved once by the server pipeline. Kept for callers written before it. */
export function actorOf(_svc: unknown, ctx: RouteContext<unknown, unknown, unknown>): Actor {
  return ctx.who;
}

/** Top-level keys of a body that its schema does not declare (accepted and ignored, DECISIONS.md). */
export function unknownKeys(body: unknown, schema: TSchema): string[] {
  const known = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).filter((k) => !Object.hasOwn(known, k)) : [];
}

/** A reply whose `Warning` header (RFC 7234, code 299) names the ignored keys of the request body. */
export function warnIgnored(status: number, value: unknown, ignored: string[]) {
  const keys = [...new Set(ignored)].map((k) => k.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '').slice(0, 64)).slice(0, 20);
  return reply(status, value, keys.length ? { warning: `299 svc "ignored unknown keys: ${keys.join(', ')}"` } : undefined);
}

// The one tenant a batch's items name (422 when they name several).
function batchTenant(items: { tenant?: string }[]): string | undefined {
  const named = [...new Set(items.map((i) => i.tenant?.trim().toLowerCase()).filter((t): t is string => !!t))];
  if (named.length > 1) throw unprocessable(`batch items name several tenants: ${named.join(', ')}`);
  return named[0];
}

// The answer of complete and fail: the task, or with ?next=<role> the fused cycle's {completed, next}.
const FINISHED = { 200: { description: 'The task; with ?next=<role>, {completed, next} (next: the task claimed for the same session, or null)', schema: Type.Union([Type.Ref(S.Task), Type.Ref(S.CycleResponse)]) } };

// Finish a task, and with ?next=<role> claim the next one in the same request (one round trip per cycle).
function finishRoute(svc: TaskService, ctx: RouteContext<S.TaskIdParams, S.FinishQuery, unknown>, end: (id: string, who: Actor, queued?: () => void) => Promise<S.Task>) {
  const id = ctx.params.task_id;
  const who = ctx.who;
  const role = ctx.query.next;
  if (role === undefined) return end(id, who);
  // An agent's token is scoped to its own task: it may finish it, never take another.
  if (ctx.principal.taskId) throw forbidden(`token is scoped to task '${ctx.principal.taskId}': it cannot claim a next task`);
  return finishThenNext(svc, id, role, who, (queued) => end(id, who, queued), ctx.query.next_session);
}

// A POST /tasks/{id}/<verb> that applies one state-machine operation.
// `agent: true`: the agent working on the task may call it with its task-scoped token.
function verbRoute(svc: TaskService, verb: string, body: TSchema, summary: string, run: (id: string, b: Record<string, unknown>, who: Actor) => Promise<S.Task>, agent = false): Route {
  return defineRoute({
    method: 'POST', path: `/tasks/:task_id/${verb}`, operationId: `task_${verb.replace(/-/g, '_')}`, summary, tags: ['tasks'], access: 'task',
    ...(agent ? { taskScope: 'own' as const } : {}),
    params: S.TaskIdParams, body, bodyOptional: true, responses: { ...TASK, ...ERRS },
    handler: (ctx) => run(ctx.params.task_id, (ctx.body ?? {}) as Record<string, unknown>, ctx.who),
  });
}

/** Routes that create tasks or change their state. */
export function taskWriteRoutes(svc: TaskService): Route[] {
  const reason = (b: Record<string, unknown>) => ({ reason: (b.reason as string | undefined) ?? (b.error as string | undefined) });
  return [
    defineRoute({
      method: 'POST', path: '/tasks', operationId: 'create_task', summary: 'Create a task', tags: ['tasks'], access: 'task', body: S.TaskCreate, bodyTenant: (b) => b.tenant,
      responses: { 201: { description: 'Created', schema: Type.Ref(S.Task) }, 403: E('Tenant access denied'), 404: E('Tenant or parent not found'), 429: E('Tenant task quota exceeded'), 503: E('Draining') },
      handler: async (ctx) => warnIgnored(201, await createTask(svc, ctx.body, ctx.who), unknownKeys(ctx.body, S.TaskCreate)),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/batch', operationId: 'create_tasks_batch', summary: 'Create several tasks atomically (duplicate titles skipped)', tags: ['tasks'], access: 'task', body: S.BatchCreateRequest, bodyTenant: (b) => batchTenant(b.tasks),
      responses: { 201: { description: 'Created', schema: Type.Ref(S.BatchCreateResponse) }, 429: E('Tenant task quota exceeded'), 503: E('Draining') },
      handler: async (ctx) => warnIgnored(201, await createBatch(svc, ctx.body.tasks, ctx.who),
        [...unknownKeys(ctx.body, S.BatchCreateRequest), ...ctx.body.tasks.flatMap((t) => unknownKeys(t, S.TaskCreate).map((k) => `tasks[].${k}`))]),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/self-create', operationId: 'self_create_task', summary: 'Create a subtask under a parent task', tags: ['tasks'], access: 'task', body: S.TaskSelfCreate, bodyTenant: (b) => b.tenant,
      taskScope: 'parent',
      responses: { 201: { description: 'Created', schema: Type.Ref(S.Task) }, 403: E('A task-scoped token names another parent'), 404: E('Parent task not found'), 503: E('Draining') },
      handler: async (ctx) => {
        const own = ctx.principal.taskId;
        if (own && ctx.body.parent_task_id !== own) throw forbidden(`token is scoped to task '${own}': subtasks go under its own task only`);
        return warnIgnored(201, await selfCreate(svc, ctx.body, ctx.who), unknownKeys(ctx.body, S.TaskSelfCreate));
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/next/:role', operationId: 'claim_next_task', summary: 'Claim the next open task of a role (optional long poll wait_s)', tags: ['tasks'], access: 'task',
      params: S.RoleParams, query: S.NextQuery,
      responses: { ...TASK, 404: E('No open tasks for the role'), 503: E('Draining') },
      handler: (ctx) => {
        // Only a long poll listens for the client going away (an AbortSignal per request costs a DOMException).
        if (!ctx.query.wait_s) return claimNext(svc, ctx.params.role, ctx.query, ctx.who);
        const abort = new AbortController();
        ctx.res.on('close', () => { if (!ctx.res.writableFinished) abort.abort(); });
        return claimNext(svc, ctx.params.role, ctx.query, ctx.who, abort.signal);
      },
    }),
    defineRoute({
      method: 'POST', path: '/tasks/claim-batch', operationId: 'claim_tasks_batch', summary: 'Claim several tasks by id, all or none', tags: ['tasks'], access: 'task', body: S.BatchClaimRequest,
      responses: { 200: { description: 'Claimed', schema: Type.Ref(S.BatchClaimResponse) }, ...ERRS, 503: E('Draining') },
      handler: (ctx) => claimBatch(svc, ctx.body.task_ids, ctx.body, ctx.who),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/claim', operationId: 'claim_task', summary: 'Claim a task by id (compare-and-set with expected_version)', tags: ['tasks'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, query: S.ClaimQuery, responses: { ...TASK, ...ERRS, 503: E('Draining') },
      handler: (ctx) => claimOne(svc, ctx.params.task_id, { expectedVersion: ctx.query.expected_version, claimed_by_session: ctx.query.claimed_by_session }, ctx.who),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/complete', operationId: 'complete_task', summary: 'Complete a task (worker completion contract)', tags: ['tasks'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, body: S.TaskCompleteRequest, query: S.FinishQuery,
      responses: { ...FINISHED, ...ERRS, 403: E('A task-scoped token asked for a next task'), 422: { description: 'Empty summary or contract violation: the task was failed; body carries it', schema: Type.Object({ detail: Type.String(), task: Type.Ref(S.Task) }) } },
      handler: (ctx) => finishRoute(svc, ctx, (id, who, queued) => completeTask(svc, id, ctx.body as never, who, queued)),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/fail', operationId: 'task_fail', summary: 'Fail a task', tags: ['tasks'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, body: S.TaskFailRequest, bodyOptional: true, query: S.FinishQuery,
      responses: { ...FINISHED, ...ERRS, 403: E('A task-scoped token asked for a next task') },
      handler: (ctx) => finishRoute(svc, ctx, (id, who, queued) => finish(svc, id, 'fail', reason((ctx.body ?? {}) as Record<string, unknown>), who, queued)),
    }),
    verbRoute(svc, 'release', S.TaskReleaseRequest, 'Release a claimed task back to open', (id, b, who) => svc.apply(id, 'release', reason(b), who), true),
    verbRoute(svc, 'reopen', S.TaskReopenRequest, 'Reopen a done task (janitor)', (id, b, who) => svc.apply(id, 'reopen', reason(b), who)),
    verbRoute(svc, 'close', S.TaskCloseRequest, 'Close a done (verified) task; {"merged": true} closes a blocked one whose work a person merged by hand',
      (id, b, who) => svc.apply(id, b.merged === true ? 'close_merged' : 'close', reason(b), who)),
    verbRoute(svc, 'cancel', S.TaskCancelRequest, 'Cancel a task and its descendants; returns the root', (id, b, who) => cancelTask(svc, id, reason(b).reason, who)),
    verbRoute(svc, 'block', S.TaskBlockRequest, 'Block a task until a human unblocks it', (id, b, who) => svc.apply(id, 'block', reason(b), who), true),
    verbRoute(svc, 'unblock', S.TaskUnblockRequest, 'Unblock a blocked task (back to open)', (id, b, who) => svc.apply(id, 'unblock', reason(b), who)),
    verbRoute(svc, 'wait-for-subtasks', S.TaskWaitForSubtasksRequest, 'Park a task until its subtasks finish', (id, b, who) => svc.apply(id, 'wait', b, who), true),
    verbRoute(svc, 'prioritize', Type.Object({}), 'Set priority 0 (highest)', (id, _b, who) => svc.patch(id, { priority: 0 }, who)),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/progress', operationId: 'report_progress', summary: 'Append a progress update (and a snapshot when counters are given)', tags: ['progress'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, body: S.TaskProgressRequest, responses: { ...TASK, 404: E('Task not found') },
      handler: (ctx) => reportProgress(svc, ctx.params.task_id, ctx.body, ctx.who),
    }),
    defineRoute({
      method: 'PATCH', path: '/tasks/:task_id', operationId: 'patch_task', summary: 'Change role, priority or model (other keys are ignored and named in a Warning header)', tags: ['tasks'], access: 'task',
      params: S.TaskIdParams, body: S.TaskPatchRequest, responses: { ...TASK, 404: E('Task not found') },
      handler: async (ctx) => {
        const { role, priority, model } = ctx.body;
        const task = await svc.patch(ctx.params.task_id, { role, priority, model }, ctx.who);
        return warnIgnored(200, task, unknownKeys(ctx.body, S.TaskPatchRequest));
      },
    }),
  ];
}
