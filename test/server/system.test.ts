import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Type } from '@sinclair/typebox';
import { defineRoute, type Route } from '../../src/lib/route.ts';
import { ADMIN, startServer, type Harness } from './harness.ts';

const Thing = Type.Object({ id: Type.String(), name: Type.String() }, { $id: 'Thing' });
const ThingCreate = Type.Object({ name: Type.String({ minLength: 1 }) }, { $id: 'ThingCreate' });
const ThingBatch = Type.Object({ items: Type.Array(Type.Ref(ThingCreate)) }, { $id: 'ThingBatch' });
const routes: Route[] = [
  defineRoute({ method: 'POST', path: '/things', operationId: 'create_thing', summary: 'Create', tags: ['things'], access: 'task', body: ThingCreate,
    responses: { 201: { description: 'Created', schema: Type.Ref(Thing) } }, handler: ({ body }) => ({ id: 'x', name: body.name }) }),
  defineRoute({ method: 'POST', path: '/things/batch', operationId: 'batch_things', summary: 'Batch', tags: ['things'], access: 'task', body: ThingBatch,
    responses: { 201: { description: 'Created', schema: Type.Array(Type.Ref(Thing)) } }, handler: ({ body }) => body.items.map((i) => ({ id: 'x', name: i.name })) }),
  defineRoute({ method: 'GET', path: '/things/:thing_id', operationId: 'get_thing', summary: 'Get', tags: ['things'], access: 'read',
    params: Type.Object({ thing_id: Type.String() }), query: Type.Object({ verbose: Type.Optional(Type.Boolean()) }),
    responses: { 200: { description: 'The thing', schema: Type.Ref(Thing) } }, handler: ({ params }) => ({ id: params.thing_id, name: 'n' }) }),
];

let draining = false;
let h: Harness;
const T = suite('system routes');
T.before(async () => {
  h = await startServer({ routes, schemas: [Thing], hooks: { isDraining: () => draining, health: () => ({ agents: 2 }) } });
});
T.after(async () => { await h.close(); });

T('health, readiness and liveness are public; / needs a token', async () => {
  for (const p of ['/health', '/health/ready', '/ready', '/health/live', '/alive', '/.well-known/agent.json', '/openapi.json', '/docs']) {
    assert.is((await h.fetch(p)).status, 200, p);
  }
  const health = await (await h.fetch('/health')).json();
  assert.equal({ ...health, uptime_s: 0 }, { status: 'ok', version: '9.9.9', uptime_s: 0 }, 'anonymous: no totals');
  const bad = await h.fetch('/health', { token: 'not-a-token' });
  assert.equal([bad.status, (await bad.json()).agents], [200, undefined], 'a bad token on a public route is just anonymous');
  const admin = await (await h.fetch('/health', { token: ADMIN })).json();
  assert.is(admin.agents, 2, 'an admin token sees the details');
  assert.equal(await (await h.fetch('/alive')).json(), { status: 'alive' });
  assert.is((await h.fetch('/')).status, 401);
  assert.is((await h.fetch('/metrics')).status, 401);
  const root = await (await h.fetch('/', { token: ADMIN })).json();
  assert.equal(root, { name: 'svc', version: '9.9.9', docs: '/docs', openapi: '/openapi.json' });
});

T('readiness answers 503 not_ready while draining', async () => {
  draining = true;
  try {
    for (const p of ['/health/ready', '/ready']) {
      const r = await h.fetch(p);
      assert.is(r.status, 503);
      assert.equal(await r.json(), { detail: 'draining', status: 'not_ready' });
    }
    assert.is((await h.fetch('/health/live')).status, 200);
  } finally {
    draining = false;
  }
  assert.equal(await (await h.fetch('/ready')).json(), { status: 'ready' });
});

T('agent card describes the service and its auth scheme', async () => {
  const card = await (await h.fetch('/.well-known/agent.json')).json();
  for (const k of ['name', 'description', 'version', 'url', 'protocolVersion', 'capabilities', 'skills', 'defaultInputModes', 'defaultOutputModes']) assert.ok(k in card, k);
  assert.is(card.url, `http://127.0.0.1:${h.port}/`);
  assert.ok(card.skills.length > 0);
  assert.equal(card.authentication.schemes, ['bearer']);
});

function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) { if (k === '$ref' && typeof v === 'string') out.push(v); else refsOf(v, out); }
  }
  return out;
}

T('/openapi.json is OpenAPI 3.1 listing every route with request and response schemas', async () => {
  const doc = await (await h.fetch('/openapi.json')).json();
  assert.is(doc.openapi, '3.1.0');
  assert.is(doc.jsonSchemaDialect, 'https://spec.openapis.org/oas/3.1/dialect/base');
  assert.is(doc.info.version, '9.9.9');
  const ops = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m as object).map((k) => `${k.toUpperCase()} ${p}`));
  for (const want of ['POST /things', 'POST /things/batch', 'GET /things/{thing_id}', 'GET /', 'GET /health', 'GET /health/ready', 'GET /ready',
    'GET /health/live', 'GET /alive', 'GET /.well-known/agent.json', 'GET /openapi.json', 'GET /docs', 'GET /metrics']) {
    assert.ok(ops.includes(want), `missing ${want}`);
  }
  assert.not.ok(ops.some((o) => o.includes('{file}')), 'static assets are hidden');
  const create = doc.paths['/things'].post;
  assert.equal(create.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/ThingCreate' });
  assert.equal(create.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/Thing' });
  assert.equal(create.responses['422'].content['application/json'].schema, { $ref: '#/components/schemas/HTTPValidationError' });
  const get = doc.paths['/things/{thing_id}'].get;
  assert.equal(get.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
    [['thing_id', 'path', true], ['verbose', 'query', false]]);
  assert.equal(doc.components.schemas.ThingBatch.properties.items.items, { $ref: '#/components/schemas/ThingCreate' });
  assert.not.ok('$id' in doc.components.schemas.Thing);
  for (const r of refsOf(doc)) {
    const id = r.replace('#/components/schemas/', '');
    assert.ok(r.startsWith('#/components/schemas/') && doc.components.schemas[id], `dangling ${r}`);
  }
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const op of Object.values(methods as Record<string, { responses: Record<string, unknown>; operationId: string }>)) {
      assert.ok(op.operationId && Object.keys(op.responses).length > 0, path);
    }
  }
});

T('a batch body validates nested Type.Ref schemas', async () => {
  const r = await h.fetch('/things/batch', { method: 'POST', token: ADMIN, headers: { 'content-type': 'application/json' }, body: '{"items":[{"name":"a"},{"name":""}]}' });
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail[0].loc, ['body', 'items', 1, 'name']);
});

T('/docs serves Swagger UI wired to /openapi.json, and its assets load', async () => {
  const html = await (await h.fetch('/docs')).text();
  assert.match(html, /swagger-ui/);
  assert.not.match(html, /https?:\/\//, 'no CDN');
  const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(assets.includes('/docs/swagger-ui-bundle.js') && assets.includes('/docs/swagger-ui.css'));
  for (const a of assets) {
    const r = await h.fetch(a);
    assert.is(r.status, 200, a);
    assert.ok((await r.arrayBuffer()).byteLength > 0, a);
  }
  const init = await (await h.fetch('/docs/swagger-initializer.js')).text();
  assert.match(init, /url: '\/openapi\.json'/);
  assert.is((await h.fetch('/docs/package.json')).status, 404);
});

T('/metrics exposes the http counter by route pattern, never the raw URL', async () => {
  await h.fetch('/things/abc123', { token: ADMIN });
  await h.fetch('/things/zzz999', { token: ADMIN });
  await h.fetch('/no/such/path');
  const r = await h.fetch('/metrics', { token: ADMIN });
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  assert.match(text, /http_requests_total\{method="GET",route="\/things\/:thing_id",status="200"\} 2/);
  assert.match(text, /http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
  assert.match(text, /http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/health"\}/);
  assert.not.match(text, /abc123|zzz999/);
});

T('domains add gauges read at scrape time', async () => {
  let counts: Record<string, number> = { open: 3, done: 1 };
  h.app.metrics.gauge('svc_tasks', 'Tasks by status', 'status', () => counts);
  let text = await (await h.fetch('/metrics', { token: ADMIN })).text();
  assert.match(text, /svc_tasks\{status="open"\} 3/);
  counts = { done: 2 };
  text = await (await h.fetch('/metrics', { token: ADMIN })).text();
  assert.match(text, /svc_tasks\{status="done"\} 2/);
  assert.not.match(text, /status="open"/, 'series that disappeared are dropped');
});

T('a Type.Ref whose schema was not provided fails at startup, naming it', async () => {
  const err = await startServer({ routes }).catch((e: Error) => e);
  assert.instance(err, Error);
  assert.match(String(err), /unresolved schema \$ref: Thing/);
});

T.run();
