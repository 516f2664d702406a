import { Type } from '../lib/typebox.ts';
import { defineRoute, type Route, type RouteContext } from '../lib/route.ts';
import { actorOf } from './routes-write.ts';
import type { TaskService } from './service.ts';

const DrainState = Type.Object({ draining: Type.Boolean(), status: Type.String(), active_tasks: Type.Integer() }, { $id: 'DrainState' });

/** POST /drain, POST /drain/cancel, GET /drain: stop (or resume) accepting creations and claims. */
export function drainRoutes(svc: TaskService): Route[] {
  // active_tasks counts every tenant for unbound admin and operator tokens, else only the caller's tenant.
  const state = (ctx: RouteContext) => {
    const p = ctx.principal;
    const all = p.tenant === null && (p.role === 'admin' || p.role === 'operator');
    const counts = all ? svc.board.counts() : svc.board.counts(ctx.who.tenant);
    return { draining: svc.draining, status: svc.draining ? 'draining' : 'accepting', active_tasks: counts.claimed + counts.in_progress };
  };
  const doc = { 200: { description: 'Drain state', schema: DrainState } };
  return [
    defineRoute({ method: 'GET', path: '/drain', operationId: 'drain_state', summary: 'Whether the server is draining', tags: ['system'], access: 'read', responses: doc, handler: (ctx) => state(ctx) }),
    defineRoute({
      method: 'POST', path: '/drain', operationId: 'drain', summary: 'Refuse new creations and claims (503) until cancelled', tags: ['system'], access: 'admin', responses: doc,
      handler: (ctx) => { svc.draining = true; svc.deps.log.warn('draining: creations and claims now answer 503'); return state(ctx); },
    }),
    defineRoute({
      method: 'POST', path: '/drain/cancel', operationId: 'drain_cancel', summary: 'Accept creations and claims again', tags: ['system'], access: 'admin', responses: doc,
      handler: (ctx) => { svc.draining = false; svc.deps.log.info('drain cancelled: accepting work again'); return state(ctx); },
    }),
  ];
}
