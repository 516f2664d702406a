import { join } from 'node:path';
import { Type } from '../lib/typebox.ts';
import { defineRoute, RAW, type Route, type RouteContext } from '../lib/route.ts';
import { sendBody, type ObserveCore } from './core.ts';
import { AGENT_COLUMNS, agentRows, EXPORT_FORMATS, selectTasks, streamExport, TASK_COLUMNS, taskRow, type ExportFormat } from './export.ts';
import { cycloneDx, readInstalledTree } from './sbom.ts';

const Format = Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f)), { default: 'json', description: 'json (an array), jsonl (one object per line) or csv (with a header row)' });
const Names = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 });
const Instant = Type.String({ format: 'date-time' });
const Limit = Type.Integer({ minimum: 1, maximum: 10_000_000 });
const TaskExportRequest = Type.Object({
  format: Type.Optional(Format), status: Type.Optional(Names), role: Type.Optional(Names), assigned_agent: Type.Optional(Type.String({ maxLength: 200 })),
  created_after: Type.Optional(Instant), created_before: Type.Optional(Instant), updated_after: Type.Optional(Instant), limit: Type.Optional(Limit),
}, { $id: 'TaskExportRequest', additionalProperties: false });
const AgentExportRequest = Type.Object({
  format: Type.Optional(Format), adapter: Type.Optional(Type.String({ maxLength: 200 })), model: Type.Optional(Type.String({ maxLength: 200 })), outcome: Type.Optional(Names),
  finished_after: Type.Optional(Instant), finished_before: Type.Optional(Instant), include_live: Type.Optional(Type.Boolean()), limit: Type.Optional(Limit),
}, { $id: 'AgentExportRequest', additionalProperties: false });
const FormatQuery = Type.Object({ format: Type.Optional(Format), tenant: Type.Optional(Type.String()) });
const SbomRequest = Type.Object({ format: Type.Optional(Type.Literal('cyclonedx-json')) }, { $id: 'SbomRequest', additionalProperties: false });
const SbomWritten = Type.Object({ path: Type.String(), serial_number: Type.String(), spec_version: Type.String(), component_count: Type.Integer() }, { $id: 'SbomWritten' });
const stamp = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

export interface ExportDeps {
  /** The folder of svc's own package.json (its node_modules is the installed tree). */
  packageRoot: string;
  uuid: () => string;
}

/** POST /export/tasks, /export/agents (audited, streamed) and GET|POST /sbom. */
export function exportRoutes(core: ObserveCore, d: ExportDeps): Route[] {
  const formatOf = (ctx: RouteContext<unknown, unknown, unknown>): ExportFormat =>
    (ctx.body as { format?: ExportFormat } | undefined)?.format ?? (ctx.query as { format?: ExportFormat }).format ?? 'json';
  // The export is audited before a byte leaves: a refused audit append refuses the export.
  const audited = async (ctx: RouteContext<unknown, unknown, unknown>, what: string, format: string, rows: number) => {
    const { actor, tenant } = ctx.who;
    const { format: _f, ...filters } = (ctx.body ?? {}) as Record<string, unknown>;
    await core.source.audit({ actor, action: `export.${what}`, resource_type: 'export', resource_id: what, details: { format, tenant, filters, rows } });
  };
  let bom: ReturnType<typeof cycloneDx> | null = null;
  const makeBom = () => cycloneDx(readInstalledTree(d.packageRoot), { serial: d.uuid(), timestamp: core.clock.iso(), toolVersion: core.version });
  const post = (path: string, operationId: string, summary: string, body: typeof TaskExportRequest | typeof AgentExportRequest, handler: Route['handler']) => defineRoute({
    method: 'POST', path, operationId, summary, tags: ['observability'], access: 'operate', body, bodyOptional: true, query: FormatQuery,
    responses: { 200: { description: 'The export (Content-Disposition: attachment)', contentType: 'application/json' } }, handler,
  });
  return [
    post('/export/tasks', 'export_tasks', 'Export the caller\'s tasks as JSON, JSONL or CSV (filters; streamed; audited)', TaskExportRequest, async (ctx) => {
      const { tenant } = ctx.who;
      const f = (ctx.body ?? {}) as Parameters<typeof selectTasks>[1];
      const tasks = selectTasks(core.source.ofTenant(tenant), f);
      const format = formatOf(ctx);
      await audited(ctx, 'tasks', format, tasks.length);
      await streamExport(ctx.res, { format, columns: TASK_COLUMNS, rows: tasks.map((t) => taskRow(t, core.ledger.costOf(t.id))), filename: `svc-tasks-${stamp(core.clock.iso())}` });
      return RAW;
    }),
    post('/export/agents', 'export_agents', 'Export agent runs (finished, then live) as JSON, JSONL or CSV (filters; streamed; audited)', AgentExportRequest, async (ctx) => {
      const { tenant } = ctx.who;
      const mine = (id: string) => { const t = core.source.get(id); return t && t.tenant === tenant ? t : undefined; };
      const rows = agentRows(core.ledger.all(), core.source.sessions().filter((s) => s.tenant === tenant), mine, (ctx.body ?? {}) as Parameters<typeof agentRows>[3]);
      const format = formatOf(ctx);
      await audited(ctx, 'agents', format, rows.length);
      await streamExport(ctx.res, { format, columns: AGENT_COLUMNS, rows, filename: `svc-agents-${stamp(core.clock.iso())}` });
      return RAW;
    }),
    defineRoute({
      method: 'GET', path: '/sbom', operationId: 'sbom', summary: 'CycloneDX 1.6 SBOM of svc\'s installed dependency tree', tags: ['observability'], access: 'read',
      responses: { 200: { description: 'CycloneDX JSON', contentType: 'application/vnd.cyclonedx+json; version=1.6' } },
      handler: (ctx) => {
        bom ??= makeBom();
        sendBody(ctx, JSON.stringify(bom, null, 2), { 'content-type': 'application/vnd.cyclonedx+json; version=1.6' });
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/sbom', operationId: 'sbom_write', summary: 'Generate the SBOM afresh and commit it as .sdd/artifacts/sbom/svc.cdx.json (svc compliance check finds it)', tags: ['observability'], access: 'operate',
      body: SbomRequest, bodyOptional: true, responses: { 200: { description: 'Where it was written', schema: SbomWritten } },
      handler: async (ctx) => {
        bom = makeBom();
        const path = join(core.source.layout.sdd, 'artifacts', 'sbom', 'svc.cdx.json');
        await core.source.writeJson(path, bom, `sbom ${bom.components.length} components`);
        await core.source.audit({ actor: ctx.principal.actor, action: 'sbom.write', resource_type: 'sbom', resource_id: bom.serialNumber, details: { components: bom.components.length } });
        return { path: '.sdd/artifacts/sbom/svc.cdx.json', serial_number: bom.serialNumber, spec_version: bom.specVersion, component_count: bom.components.length };
      },
    }),
  ];
}
