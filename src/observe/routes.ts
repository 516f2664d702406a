import { Type } from '../lib/typebox.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';
import { sendBody, snapshotVersion, viewOf, type ObserveCore } from './core.ts';
import { buildDashboard } from './dashboard.ts';
import { grafanaDashboard } from './grafana.ts';
import { buildSlo } from './slo.ts';
import { buildStatus } from './status.ts';

const Obj = (id: string, description: string) => Type.Object({}, { $id: id, description, additionalProperties: true });
const StatusBody = Obj('StatusReport', 'Counts per status and total, agents, cost_usd, per_role, summary, metrics (cache_hit_rate and its counts), uptime_s, version, agents_sandbox {mode, reason}');
const SloBody = Obj('SloReport', 'slos [{name, description, target, current, samples, status, met}] and error_budget');
const DashboardBody = Obj('DashboardData', 'ts, seq, stats, tasks, agents, live_costs, alerts, you');
const TenantQuery = Type.Object({ tenant: Type.Optional(Type.String()) });
const DashboardQuery = Type.Object({
  tenant: Type.Optional(Type.String()),
  status: Type.Optional(Type.String({ description: 'Comma-separated statuses to list (default: every task)' })),
});

/** GET /status, /slo, /dashboard/data and /grafana/dashboard. */
export function observeRoutes(core: ObserveCore): Route[] {
  const get = (path: string, operationId: string, summary: string, schema: ReturnType<typeof Obj>, extra: Partial<Route> & Pick<Route, 'handler'>) =>
    defineRoute({ method: 'GET', path, operationId, summary, tags: ['observability'], access: 'read', responses: { 200: { description: summary, schema } }, ...extra });
  return [
    get('/status', 'status', 'Status summary of the caller\'s tenant: counts, agents, cost, per role, cache metrics', StatusBody, {
      query: TenantQuery,
      handler: (ctx) => {
        const { tenant } = ctx.who;
        sendBody(ctx, core.cache.get(`status:${tenant}`, snapshotVersion(core), () => buildStatus(viewOf(core, tenant), {
          version: core.version, uptimeS: Math.round((core.clock.now() - core.startedMs) / 100) / 10, maxAgents: core.source.maxAgents(),
          draining: core.source.draining(), seq: core.feed.ring.seq, cache: core.cache.stats(), sandbox: core.source.sandbox(),
        })));
        return RAW;
      },
    }),
    get('/slo', 'slo', 'Service level objectives with target, current and met, and the error budget', SloBody, {
      query: TenantQuery,
      handler: (ctx) => {
        const { tenant } = ctx.who;
        sendBody(ctx, core.cache.get(`slo:${tenant}`, snapshotVersion(core), () => {
          const runs = core.ledger.all().filter((r) => core.source.get(r.task_id)?.tenant === tenant);
          return buildSlo({ counts: core.source.counts(tenant), runs }, core.config.slo);
        }));
        return RAW;
      },
    }),
    get('/dashboard/data', 'dashboard_data', 'The board for editor clients and the board page: stats, tasks, agents, costs, alerts; seq resumes /events', DashboardBody, {
      query: DashboardQuery,
      handler: (ctx) => {
        const who = ctx.who;
        const q = ctx.query as { status?: string };
        const only = q.status ? new Set(q.status.split(',').map((s) => s.trim()).filter(Boolean)) : null;
        const you = { actor: who.actor, role: ctx.principal.role, tenant: who.tenant, signed_in: ctx.principal.kind === 'session' };
        sendBody(ctx, core.cache.get(`dash:${who.tenant}:${q.status ?? ''}:${who.actor}:${ctx.principal.role}`, snapshotVersion(core), () => {
          const view = viewOf(core, who.tenant);
          if (only) view.tasks = view.tasks.filter((t) => only.has(t.status));
          return buildDashboard(view, {
            get: (id) => core.source.get(id), budgetUsd: core.config.budget_usd, warnPct: core.config.budget_warn_pct,
            draining: core.source.draining(), seq: core.feed.ring.seq, ts: core.clock.iso(), you,
          });
        }));
        return RAW;
      },
    }),
    get('/grafana/dashboard', 'grafana_dashboard', 'Grafana dashboard over the metrics of /metrics (POST it to Grafana\'s /api/dashboards/db, or import .dashboard)', Obj('GrafanaDashboard', '{dashboard, overwrite}'), {
      query: Type.Object({ datasource: Type.Optional(Type.String({ maxLength: 200, default: 'Prometheus' })) }),
      handler: (ctx) => {
        const body = JSON.stringify(grafanaDashboard((ctx.query as { datasource?: string }).datasource ?? 'Prometheus', core.version), null, 2);
        sendBody(ctx, body, { 'content-disposition': 'attachment; filename="svc-dashboard.json"' });
        return RAW;
      },
    }),
  ];
}
