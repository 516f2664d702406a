import { Type, type TSchema } from '@sinclair/typebox';
import { forbidden, unprocessable } from '../lib/http-error.ts';
import { defineRoute, reply, type Route, type RouteContext } from '../lib/route.ts';
import { assertTaskId } from '../store/ids.ts';
import { claimBatch, claimNext, claimOne } from './claims.ts';
import { createBatch, createTask, selfCreate } from './create.ts';
import { cancelTask, completeTask, finish } from './lifecycle.ts';
import { reportProgress } from './progress.ts';
import * as S from './schema.ts';
import type { Actor, TaskService } from './service.ts';

const E = (description: string) => ({ description, schema: ErrorBody });
export const ErrorBody = Type.Object({ detail: Type.String() }, { $id: 'ErrorBody', additionalProperties: true });
const TASK = { 200: { description: 'The task', schema: Type.Ref(S.Task) } };
const ERRS = { 404: E('Task not found'), 409: E('Transition not allowed from the current state') };

/** The caller's actor name and tenant scope (X-Tenant-ID header, ?tenant=, or a create body's `tenant`). */
export function actorOf(svc: TaskService, ctx: RouteContext<unknown, unknown, unknown>, bodyTenant?: string): Actor {
  // ?tenant= counts on every route, also where the query schema does not declare it (search, next, a task by id).
  const raw = (ctx.req as { query?: Record<string, unknown> }).query?.tenant;
  const query = (ctx.query as { tenant?: string } | undefined)?.tenant ?? (typeof raw === 'string' ? raw : undefined);
  const header = ctx.req.headers['x-tenant-id'];
  const named = bodyTenant?.trim().toLowerCase() || undefined;
  // The body's tenant obeys the same rules as the header (403 bound elsewhere, 404 unknown), never silently dropped.
  const tenant = svc.deps.tenants.scope(ctx.principal.tenant, typeof header === 'string' ? header : undefined, query ?? named);
  if (named !== undefined && named !== tenant) throw unprocessable(`body names tenant '${named}' but the request acts in '${tenant}'`);
  return { actor: ctx.principal.actor, tenant, ...(ctx.principal.nodeId ? { node: ctx.principal.nodeId } : {}) };
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

// A POST /tasks/{id}/<verb> that applies one state-machine operation.
// `agent: true`: the agent working on the task may call it with its task-scoped token.
function verbRoute(svc: TaskService, verb: string, body: TSchema, summary: string, run: (id: string, b: Record<string, unknown>, who: Actor) => Promise<S.Task>, agent = false): Route {
  return defineRoute({
    method: 'POST', path: `/tasks/:task_id/${verb}`, operationId: `task_${verb.replace(/-/g, '_')}`, summary, tags: ['tasks'], access: 'task',
    ...(agent ? { taskScope: 'own' as const } : {}),
    params: S.TaskIdParams, body, bodyOptional: true, responses: { ...TASK, ...ERRS },
    handler: (ctx) => run(assertTaskId(ctx.params.task_id), (ctx.body ?? {}) as Record<string, unknown>, actorOf(svc, ctx)),
  });
}

/** Routes that create tasks or change their state. */
export function taskWriteRoutes(svc: TaskService): Route[] {
  const reason = (b: Record<string, unknown>) => ({ reason: (b.reason as string | undefined) ?? (b.error as string | undefined) });
  return [
    defineRoute({
      method: 'POST', path: '/tasks', operationId: 'create_task', summary: 'Create a task', tags: ['tasks'], access: 'task', body: S.TaskCreate,
      responses: { 201: { description: 'Created', schema: Type.Ref(S.Task) }, 403: E('Tenant access denied'), 404: E('Tenant or parent not found'), 429: E('Tenant task quota exceeded'), 503: E('Draining') },
      handler: async (ctx) => warnIgnored(201, await createTask(svc, ctx.body, actorOf(svc, ctx, ctx.body.tenant)), unknownKeys(ctx.body, S.TaskCreate)),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/batch', operationId: 'create_tasks_batch', summary: 'Create several tasks atomically (duplicate titles skipped)', tags: ['tasks'], access: 'task', body: S.BatchCreateRequest,
      responses: { 201: { description: 'Created', schema: Type.Ref(S.BatchCreateResponse) }, 429: E('Tenant task quota exceeded'), 503: E('Draining') },
      handler: async (ctx) => warnIgnored(201, await createBatch(svc, ctx.body.tasks, actorOf(svc, ctx, batchTenant(ctx.body.tasks))),
        [...unknownKeys(ctx.body, S.BatchCreateRequest), ...ctx.body.tasks.flatMap((t) => unknownKeys(t, S.TaskCreate).map((k) => `tasks[].${k}`))]),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/self-create', operationId: 'self_create_task', summary: 'Create a subtask under a parent task', tags: ['tasks'], access: 'task', body: S.TaskSelfCreate,
      taskScope: 'parent',
      responses: { 201: { description: 'Created', schema: Type.Ref(S.Task) }, 403: E('A task-scoped token names another parent'), 404: E('Parent task not found'), 503: E('Draining') },
      handler: async (ctx) => {
        const own = ctx.principal.taskId;
        if (own && ctx.body.parent_task_id !== own) throw forbidden(`token is scoped to task '${own}': subtasks go under its own task only`);
        return warnIgnored(201, await selfCreate(svc, ctx.body, actorOf(svc, ctx, ctx.body.tenant)), unknownKeys(ctx.body, S.TaskSelfCreate));
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/next/:role', operationId: 'claim_next_task', summary: 'Claim the next open task of a role (optional long poll wait_s)', tags: ['tasks'], access: 'task',
      params: S.RoleParams, query: S.NextQuery,
      responses: { ...TASK, 404: E('No open tasks for the role'), 503: E('Draining') },
      handler: (ctx) => {
        // Only a long poll listens for the client going away (an AbortSignal per request costs a DOMException).
        if (!ctx.query.wait_s) return claimNext(svc, ctx.params.role, ctx.query, actorOf(svc, ctx));
        const abort = new AbortController();
        ctx.res.on('close', () => { if (!ctx.res.writableFinished) abort.abort(); });
        return claimNext(svc, ctx.params.role, ctx.query, actorOf(svc, ctx), abort.signal);
      },
    }),
    defineRoute({
      method: 'POST', path: '/tasks/claim-batch', operationId: 'claim_tasks_batch', summary: 'Claim several tasks by id, all or none', tags: ['tasks'], access: 'task', body: S.BatchClaimRequest,
      responses: { 200: { description: 'Claimed', schema: Type.Ref(S.BatchClaimResponse) }, ...ERRS, 503: E('Draining') },
      handler: (ctx) => claimBatch(svc, ctx.body.task_ids, ctx.body, actorOf(svc, ctx)),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/claim', operationId: 'claim_task', summary: 'Claim a task by id (compare-and-set with expected_version)', tags: ['tasks'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, query: S.ClaimQuery, responses: { ...TASK, ...ERRS, 503: E('Draining') },
      handler: (ctx) => claimOne(svc, assertTaskId(ctx.params.task_id), { expectedVersion: ctx.query.expected_version, claimed_by_session: ctx.query.claimed_by_session }, actorOf(svc, ctx)),
    }),
    defineRoute({
      method: 'POST', path: '/tasks/:task_id/complete', operationId: 'complete_task', summary: 'Complete a task (worker completion contract)', tags: ['tasks'], access: 'task', taskScope: 'own',
      params: S.TaskIdParams, body: S.TaskCompleteRequest,
      responses: { ...TASK, ...ERRS, 422: { description: 'Empty summary or contract violation: the task was failed; body carries it', schema: Type.Object({ detail: Type.String(), task: Type.Ref(S.Task) }) } },
      handler: (ctx) => completeTask(svc, assertTaskId(ctx.params.task_id), ctx.body as never, actorOf(svc, ctx)),
    }),
    verbRoute(svc, 'fail', S.TaskFailRequest, 'Fail a task', (id, b, who) => finish(svc, id, 'fail', reason(b), who), true),
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
      handler: (ctx) => reportProgress(svc, assertTaskId(ctx.params.task_id), ctx.body, actorOf(svc, ctx)),
    }),
    defineRoute({
      method: 'PATCH', path: '/tasks/:task_id', operationId: 'patch_task', summary: 'Change role, priority or model (other keys are ignored and named in a Warning header)', tags: ['tasks'], access: 'task',
      params: S.TaskIdParams, body: S.TaskPatchRequest, responses: { ...TASK, 404: E('Task not found') },
      handler: async (ctx) => {
        const { role, priority, model } = ctx.body;
        const task = await svc.patch(assertTaskId(ctx.params.task_id), { role, priority, model }, actorOf(svc, ctx));
        return warnIgnored(200, task, unknownKeys(ctx.body, S.TaskPatchRequest));
      },
    }),
  ];
}
