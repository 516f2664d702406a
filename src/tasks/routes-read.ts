import { Type } from '../lib/typebox.ts';
import { HttpError, notFound } from '../lib/http-error.ts';
import { jsonArray, streamJson, withinBudget } from '../lib/json-stream.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';
import { buildGraph, neighbors } from './graph.ts';
import { readProgress, readSnapshots } from './progress.ts';
import { countTasks, filterTasks, FLAT_LIST_CAP, DEFAULT_LIST_LIMIT, paginate, searchTasks } from './query.ts';
import * as S from './schema.ts';
import type { TaskService } from './service.ts';
import { actorOf, ErrorBody } from './routes-write.ts';

const E = (description: string) => ({ description, schema: ErrorBody });

/** Byte budgets of the legacy flat list and of one archive answer. */
export const FLAT_LIST_BYTES = 8 * 1024 * 1024;
export const ARCHIVE_BYTES = 8 * 1024 * 1024;

function* pageJson(p: S.PaginatedTasks, toJson: (t: S.Task) => Buffer): Generator<string | Buffer> {
  yield '{"tasks":';
  yield* jsonArray(p.tasks.map(toJson));
  yield `,"total":${p.total},"limit":${p.limit},"offset":${p.offset}}`;
}
const TASK = { 200: { description: 'The task', schema: Type.Ref(S.Task) }, 404: E('Task not found') };

/** Routes that read the board. */
export function taskReadRoutes(svc: TaskService): Route[] {
  return [
    defineRoute({
      method: 'GET', path: '/tasks', operationId: 'list_tasks', heavy: true, summary: 'List tasks (paginated with limit/offset; flat form deprecated and capped)', tags: ['tasks'], access: 'read',
      query: S.ListQuery,
      responses: { 200: { description: 'Flat list, or the paginated envelope when limit or offset is given', schema: Type.Union([Type.Array(Type.Ref(S.Task)), Type.Ref(S.PaginatedTasks)]) }, 403: E('Tenant scope denied'), 404: E('Unknown tenant') },
      handler: async (ctx) => {
        const who = ctx.who;
        const q = ctx.query;
        const tasks = filterTasks(svc.board.ofTenant(who.tenant), q);
        // Both forms are written a task at a time (json-stream.ts): a page of large tasks never sits in memory whole.
        if (q.limit !== undefined || q.offset !== undefined) {
          const page = paginate(tasks, q.limit ?? DEFAULT_LIST_LIMIT, q.offset ?? 0);
          await streamJson(ctx.res, 200, {}, pageJson(page, (t) => svc.board.jsonOf(t)));
          return RAW;
        }
        // The legacy flat form stops at FLAT_LIST_CAP tasks or FLAT_LIST_BYTES, whichever comes first.
        const texts = await withinBudget(tasks.slice(0, FLAT_LIST_CAP), FLAT_LIST_BYTES, (t) => svc.board.jsonOf(t));
        await streamJson(ctx.res, 200, {
          deprecation: '@1767225600', link: '</tasks?limit=100&offset=0>; rel="successor-version"',
          'x-total-count': String(tasks.length), 'x-returned-count': String(texts.length),
        }, jsonArray(texts));
        return RAW;
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/search', operationId: 'search_tasks', summary: 'Search tasks with sorting and pages', tags: ['tasks'], access: 'read', query: S.SearchQuery,
      responses: { 200: { description: 'A page of tasks', schema: Type.Ref(S.SearchResponse) } },
      handler: (ctx) => searchTasks(svc.board.ofTenant(ctx.who.tenant), ctx.query),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/counts', operationId: 'count_tasks', summary: 'Number of tasks per status', tags: ['tasks'], access: 'read', query: S.CountsQuery,
      responses: { 200: { description: 'Counts', schema: Type.Ref(S.TaskCounts) }, 403: E('Tenant scope denied'), 404: E('Unknown tenant') },
      handler: (ctx) => countTasks(svc.board.ofTenant(ctx.who.tenant)),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/archive', operationId: 'list_archive', heavy: true, summary: 'Last N done or failed tasks, newest last', tags: ['tasks'], access: 'read', query: S.ArchiveQuery,
      responses: { 200: { description: 'Archive records', schema: Type.Array(Type.Ref(S.ArchiveRecord)) }, 403: E('Tenant scope denied'), 404: E('Unknown tenant') },
      handler: async (ctx) => {
        const { tenant } = ctx.who;
        // Newest first from the end of the file, until `limit` records of the tenant or ARCHIVE_BYTES of them.
        const found: S.ArchiveRecord[] = [];
        let bytes = 0;
        await svc.deps.store.scanJsonl<S.ArchiveRecord>(svc.deps.layout.archive, (r) => {
          if (r.tenant !== tenant) return true;
          bytes += Buffer.byteLength(JSON.stringify(r));
          if (found.length > 0 && bytes > ARCHIVE_BYTES) return false;
          return found.push(r) < ctx.query.limit;
        });
        await streamJson(ctx.res, 200, {}, jsonArray(found.reverse().map((r) => JSON.stringify(r))));
        return RAW;
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/graph', operationId: 'task_graph', summary: 'Dependency graph with critical path, width and bottlenecks', tags: ['graph'], access: 'read',
      responses: { 200: { description: 'Graph', schema: Type.Ref(S.TaskGraph) }, 403: E('Tenant scope denied'), 404: E('Unknown tenant') },
      handler: (ctx) => buildGraph(svc.board.ofTenant(ctx.who.tenant)),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id', taskScope: 'own', operationId: 'get_task', summary: 'One task', tags: ['tasks'], access: 'read', params: S.TaskIdParams, responses: TASK,
      handler: (ctx) => svc.visible(ctx.params.task_id, ctx.who.tenant),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/graph-neighbors', taskScope: 'own', operationId: 'task_graph_neighbors', summary: 'Upstream and downstream tasks (depth 1)', tags: ['graph'], access: 'read', params: S.TaskIdParams,
      responses: { 200: { description: 'Neighbours', schema: Type.Ref(S.GraphNeighbors) }, 404: E('Task not found') },
      handler: (ctx) => {
        const t = svc.visible(ctx.params.task_id, ctx.who.tenant);
        return neighbors(t, (id) => svc.board.get(id), (id) => svc.board.dependents(id));
      },
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/progress', taskScope: 'own', operationId: 'get_progress', summary: 'Progress of the current run with its counter vector', tags: ['progress'], access: 'read', params: S.TaskIdParams,
      responses: { 200: { description: 'Progress', schema: Type.Ref(S.TaskProgressResponse) }, 404: E('Task not found') },
      handler: (ctx) => readProgress(svc, ctx.params.task_id, ctx.who),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/snapshots', taskScope: 'own', operationId: 'get_snapshots', summary: 'Up to 10 progress snapshots, oldest first', tags: ['progress'], access: 'read', params: S.TaskIdParams,
      responses: { 200: { description: 'Snapshots', schema: Type.Array(Type.Ref(S.SnapshotEntry)) }, 404: E('Task not found') },
      handler: (ctx) => readSnapshots(svc, ctx.params.task_id, ctx.who),
    }),
    defineRoute({
      method: 'GET', path: '/tasks/:task_id/gates', taskScope: 'own', operationId: 'get_gate_report', summary: 'Quality-gate report of the latest run', tags: ['gates'], access: 'read', params: S.TaskIdParams,
      responses: { 200: { description: 'Gate report', schema: Type.Ref(S.GateReport) }, 404: E('Task or report not found'), 500: E('Report unreadable') },
      handler: async (ctx) => {
        const id = ctx.params.task_id;
        svc.visible(id, ctx.who.tenant);
        const text = await svc.deps.store.readText(svc.deps.layout.gates(id)).catch(() => undefined);
        if (text === undefined) throw notFound(`Gate report for task '${id}' not found`);
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new HttpError(500, `Gate report for task '${id}' is unreadable`);
        }
      },
    }),
  ];
}
