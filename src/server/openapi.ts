import { Type, type TSchema } from '../lib/typebox.ts';
import type { Route } from '../lib/route.ts';

type Json = Record<string, unknown>;

/** One entry of a 422 body (FastAPI's ValidationError). */
export const ValidationErrorSchema = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
  input: Type.Optional(Type.Unknown()),
}, { $id: 'ValidationError' });

/** The 422 body: `{"detail": [ValidationError]}`. */
export const HTTPValidationErrorSchema = Type.Object({
  detail: Type.Array(Type.Ref(ValidationErrorSchema)),
}, { $id: 'HTTPValidationError' });

const ref = (id: string) => `#/components/schemas/${id}`;

// Visit every plain object of a schema tree (symbol keys of TypeBox are not enumerable strings).
function walk(node: unknown, visit: (o: Json) => void): void {
  if (Array.isArray(node)) node.forEach((n) => walk(n, visit));
  else if (node && typeof node === 'object') {
    visit(node as Json);
    Object.values(node).forEach((v) => walk(v, visit));
  }
}

/** Every schema with an `$id` reachable from the routes, plus `extra`: the components and the Ref targets. */
export function collectSchemas(routes: readonly Route[], extra: readonly TSchema[] = []): Map<string, TSchema> {
  const found = new Map<string, TSchema>();
  const add = (o: Json) => { if (typeof o.$id === 'string' && !found.has(o.$id)) found.set(o.$id, o as TSchema); };
  for (const s of [...extra, HTTPValidationErrorSchema, ValidationErrorSchema]) walk(s, add);
  for (const r of routes) {
    walk([r.params, r.query, r.body, ...Object.values(r.responses).map((d) => d.schema)], add);
  }
  return found;
}

/** `$ref` targets that no collected schema provides (each would break validation and the document). */
export function unresolvedRefs(schemas: Map<string, TSchema>, routes: readonly Route[]): string[] {
  const missing = new Set<string>();
  const check = (o: Json) => {
    if (typeof o.$ref === 'string' && !o.$ref.startsWith('#') && !schemas.has(o.$ref)) missing.add(o.$ref);
  };
  walk([...schemas.values()], check);
  for (const r of routes) walk([r.params, r.query, r.body, ...Object.values(r.responses).map((d) => d.schema)], check);
  return [...missing];
}

/** Plain JSON Schema: nested `$id` schemas become component `$ref`s, bare `$ref: 'X'` is rewritten. */
export function toJsonSchema(node: unknown, isRoot = true): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, false));
  if (!node || typeof node !== 'object') return node;
  const o = node as Json;
  if (!isRoot && typeof o.$id === 'string') return { $ref: ref(o.$id) };
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) {
    if (k === '$id') continue;
    out[k] = k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? ref(v) : toJsonSchema(v, false);
  }
  return out;
}

// A schema at a use site: a named one is referenced, an anonymous one inlined.
const use = (s: TSchema): unknown => (typeof s.$id === 'string' ? { $ref: ref(s.$id) } : toJsonSchema(s));

function parameters(route: Route): Json[] {
  const out: Json[] = [];
  const add = (schema: TSchema | undefined, where: 'path' | 'query') => {
    const props = (schema?.properties ?? {}) as Record<string, TSchema>;
    const required = new Set<string>((schema?.required as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries(props)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: use(s),
        ...(s.description ? { description: s.description } : {}) });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  return out;
}

function requestBody(route: Route): Json | undefined {
  if (route.rawBody) {
    const content: Json = { 'application/json': { schema: route.body ? use(route.body) : {} } };
    if (route.form) content['application/x-www-form-urlencoded'] = { schema: route.body ? use(route.body) : {} };
    return { required: !route.bodyOptional, description: 'Raw body, verified by its signature before it is parsed', content };
  }
  if (!route.body) return undefined;
  const content: Json = { 'application/json': { schema: use(route.body) } };
  if (route.form) content['application/x-www-form-urlencoded'] = { schema: use(route.body) };
  return { required: !route.bodyOptional, content };
}

function responses(route: Route): Json {
  const out: Json = {};
  for (const [code, doc] of Object.entries(route.responses)) {
    out[code] = { description: doc.description,
      ...(doc.schema ? { content: { [doc.contentType ?? 'application/json']: { schema: use(doc.schema) } } } : {}) };
  }
  if ((route.params || route.query || route.body) && !out['422']) {
    out['422'] = { description: 'Validation Error', content: { 'application/json': { schema: { $ref: ref('HTTPValidationError') } } } };
  }
  return out;
}

/** The OpenAPI 3.1 document of the routes (hidden ones left out); throws on an unresolved `$ref`. */
export function buildOpenApi(routes: readonly Route[], info: { title: string; version: string; description?: string },
  extraSchemas: readonly TSchema[] = []): Json {
  const schemas = collectSchemas(routes, extraSchemas);
  const missing = unresolvedRefs(schemas, routes);
  if (missing.length) throw new Error(`unresolved schema $ref: ${missing.join(', ')} (pass the schemas to createServer({ schemas }))`);
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    if (r.hidden) continue;
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const params = parameters(r);
    const body = requestBody(r);
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.operationId, summary: r.summary, tags: r.tags,
      // Who may call it (DECISIONS.md Access) and what a task-scoped agent token may do with it.
      'x-svc-access': r.access, ...(r.taskScope ? { 'x-svc-task-scope': r.taskScope } : {}), ...(r.nodeScope ? { 'x-svc-node-scope': r.nodeScope } : {}),
      ...(params.length ? { parameters: params } : {}), ...(body ? { requestBody: body } : {}), responses: responses(r),
    };
  }
  const components = Object.fromEntries([...schemas].sort(([a], [b]) => a.localeCompare(b)).map(([id, s]) => [id, toJsonSchema(s)]));
  return {
    openapi: '3.1.0', jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info, paths, components: { schemas: components },
  };
}
