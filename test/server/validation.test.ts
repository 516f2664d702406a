import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../../src/lib/http-error.ts';
import { defineRoute, reply, type Route } from '../../src/lib/route.ts';
import { depthExceeded } from '../../src/server/body.ts';
import { ADMIN, rawRequest, startServer, type Harness } from './harness.ts';

const Item = Type.Object({
  title: Type.String({ minLength: 1 }),
  priority: Type.Integer({ minimum: 0, maximum: 1000, default: 2 }),
  tags: Type.Optional(Type.Array(Type.String())),
  meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
}, { $id: 'Item' });
const Id = Type.Object({ item_id: Type.String({ pattern: '^[0-9a-z]+$' }) });
const ListQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })), done: Type.Optional(Type.Boolean()), tag: Type.Optional(Type.Array(Type.String())) });

const routes: Route[] = [
  defineRoute({ method: 'POST', path: '/items', operationId: 'create_item', summary: 'Create', tags: ['t'], access: 'task', body: Item,
    responses: { 201: { description: 'Created', schema: Type.Ref(Item) } }, handler: ({ body }) => ({ ...body, id: 'abc' }) }),
  defineRoute({ method: 'GET', path: '/items', operationId: 'list_items', summary: 'List', tags: ['t'], access: 'read', query: ListQuery,
    responses: { 200: { description: 'Query echo' } }, handler: ({ query }) => ({ query }) }),
  defineRoute({ method: 'GET', path: '/items/special', operationId: 'special', summary: 'Static beats param', tags: ['t'], access: 'read',
    responses: { 200: { description: 'ok' } }, handler: () => ({ special: true }) }),
  defineRoute({ method: 'GET', path: '/items/:item_id', operationId: 'get_item', summary: 'Get', tags: ['t'], access: 'read', params: Id,
    responses: { 200: { description: 'ok' } }, handler: ({ params }) => ({ id: params.item_id }) }),
  defineRoute({ method: 'POST', path: '/items/:item_id/release', operationId: 'release', summary: 'Optional body', tags: ['t'], access: 'task',
    params: Id, body: Type.Object({ reason: Type.String({ default: 'none' }) }), bodyOptional: true,
    responses: { 200: { description: 'ok' } }, handler: ({ body }) => ({ body: body ?? null }) }),
  defineRoute({ method: 'POST', path: '/form', operationId: 'form', summary: 'Form or JSON', tags: ['t'], access: 'public', form: true,
    body: Type.Object({ user_code: Type.String(), n: Type.Integer() }), responses: { 200: { description: 'ok' } }, handler: ({ body }) => body }),
  defineRoute({ method: 'POST', path: '/raw', operationId: 'raw', summary: 'Raw body', tags: ['t'], access: 'hmac', rawBody: true,
    responses: { 200: { description: 'ok' } }, handler: ({ body }) => ({ bytes: (body as Buffer).length }) }),
  defineRoute({ method: 'POST', path: '/signed', operationId: 'signed', summary: 'Raw body verified, then validated', tags: ['t'], access: 'hmac', rawBody: true, body: Item,
    verify: ({ req, raw }) => { if (req.headers['x-sig'] !== `len=${raw.length}`) throw new HttpError(401, 'bad signature'); },
    responses: { 200: { description: 'ok' } }, handler: ({ body, raw }) => ({ title: (body as { title: string }).title, bytes: raw?.length }) }),
  defineRoute({ method: 'DELETE', path: '/items/:item_id', operationId: 'delete_item', summary: 'Delete', tags: ['t'], access: 'task', params: Id,
    responses: { 204: { description: 'Deleted' } }, handler: () => undefined }),
  defineRoute({ method: 'GET', path: '/teapot', operationId: 'teapot', summary: 'reply()', tags: ['t'], access: 'public',
    responses: { 418: { description: 'teapot' } }, handler: () => reply(418, { detail: 'short and stout' }, { 'x-tea': 'earl grey' }) }),
];

let h: Harness;
const T = suite('request validation');
T.before(async () => { h = await startServer({ routes }); });
T.after(async () => { await h.close(); });

const json = (body: unknown, extra: Record<string, string> = {}) =>
  ({ method: 'POST', token: ADMIN, headers: { 'content-type': 'application/json', ...extra }, body: typeof body === 'string' ? body : JSON.stringify(body) });

T('valid body → handler sees defaults filled, answers the documented 201', async () => {
  const r = await h.fetch('/items', json({ title: 'a', junk: 1 }));
  assert.is(r.status, 201);
  assert.is(r.headers.get('content-type'), 'application/json');
  const b = await r.json();
  assert.is(b.priority, 2);
  assert.is(b.title, 'a');
});

T('body schema errors → 422 FastAPI shape, one error per loc', async () => {
  const r = await h.fetch('/items', json({ priority: 'high', tags: ['x', 5] }));
  assert.is(r.status, 422);
  const { detail } = await r.json();
  assert.equal(detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.title'), { loc: ['body', 'title'], msg: 'Expected required property', type: 'missing' });
  assert.is(detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.priority').type, 'int_type');
  assert.is(detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.tags.1').type, 'string_type');
  const locs = detail.map((d: { loc: unknown[] }) => JSON.stringify(d.loc));
  assert.is(new Set(locs).size, locs.length);
});

T('charset parameter is accepted; a non-object body is a 422 model_type', async () => {
  const ok = await h.fetch('/items', json({ title: 'x' }, { 'content-type': 'application/json; charset=utf-8' }));
  assert.is(ok.status, 201);
  const r = await h.fetch('/items', json('[1,2]'));
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail[0].loc, ['body']);
});

T('query converted and checked; duplicates of a scalar → 422; arrays repeat; unknown keys ignored', async () => {
  let r = await h.fetch('/items?limit=20&done=true&junk=1&tag=a&tag=b', { token: ADMIN });
  assert.equal(await r.json(), { query: { limit: 20, done: true, tag: ['a', 'b'] } });
  r = await h.fetch('/items?limit=0', { token: ADMIN });
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail[0].loc, ['query', 'limit']);
  r = await h.fetch('/items?limit=abc', { token: ADMIN });
  assert.is((await r.json()).detail[0].type, 'int_type');
  r = await h.fetch('/items?limit=1&limit=2', { token: ADMIN });
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail[0].loc, ['query', 'limit']);
});

T('path params validated → 422 with loc path; static route wins over :param', async () => {
  let r = await h.fetch('/items/ABC!', { token: ADMIN });
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail[0].loc, ['path', 'item_id']);
  r = await h.fetch('/items/special', { token: ADMIN });
  assert.equal(await r.json(), { special: true });
  r = await h.fetch('/items/a%62c', { token: ADMIN });
  assert.equal(await r.json(), { id: 'abc' });
});

T('invalid JSON → 422 json_invalid with a position', async () => {
  const r = await h.fetch('/items', json('{"title": "x",'));
  assert.is(r.status, 422);
  const { detail } = await r.json();
  assert.is(detail.length, 1);
  assert.is(detail[0].type, 'json_invalid');
  assert.is(detail[0].msg, 'JSON decode error');
  assert.is(detail[0].loc[0], 'body');
  assert.type(detail[0].loc[1], 'number');
});

T('invalid UTF-8 → 422 json_invalid at the bad byte', async () => {
  const body = Buffer.concat([Buffer.from('{"title":"ab'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const r = await rawRequest(h.port, { path: '/items', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': String(body.length) }, chunks: [body] });
  assert.is(r.status, 422);
  const { detail } = JSON.parse(r.body);
  assert.is(detail[0].type, 'json_invalid');
  assert.equal(detail[0].loc, ['body', 12]);
});

T('nesting deeper than 64 → 422, 64 levels are fine', async () => {
  const nest = (n: number) => '{"title":"x","meta":' + '{"a":'.repeat(n - 1) + '1' + '}'.repeat(n - 1) + '}';
  assert.is((await h.fetch('/items', json(nest(64)))).status, 201);
  const r = await h.fetch('/items', json(nest(65)));
  assert.is(r.status, 422);
  assert.is((await r.json()).detail[0].type, 'json_invalid');
  const huge = await h.fetch('/items', json('['.repeat(100_000) + ']'.repeat(100_000)));
  assert.is(huge.status, 422);
});

T('wrong or missing content type → 415; a form route also takes urlencoded', async () => {
  let r = await h.fetch('/items', { method: 'POST', token: ADMIN, headers: { 'content-type': 'text/plain' }, body: '{"title":"x"}' });
  assert.is(r.status, 415);
  assert.equal(await r.json(), { detail: 'Content-Type must be application/json' });
  r = await h.fetch('/items', { method: 'POST', token: ADMIN, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'title=x' });
  assert.is(r.status, 415);
  r = await h.fetch('/form', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user_code=AB-CD&n=7' });
  assert.equal(await r.json(), { user_code: 'AB-CD', n: 7 });
  r = await h.fetch('/form', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user_code":"z","n":1}' });
  assert.equal(await r.json(), { user_code: 'z', n: 1 });
});

T('empty body: required → 422 missing, optional → defaults', async () => {
  let r = await h.fetch('/items', { method: 'POST', token: ADMIN });
  assert.is(r.status, 422);
  assert.equal((await r.json()).detail, [{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  r = await h.fetch('/items/abc/release', { method: 'POST', token: ADMIN });
  assert.equal(await r.json(), { body: { reason: 'none' } });
  r = await h.fetch('/items/abc/release', json({ reason: 'later' }));
  assert.equal(await r.json(), { body: { reason: 'later' } });
});

T('body over 1 MiB → 413 by Content-Length', async () => {
  const big = Buffer.alloc(1_048_577, 0x20);
  const r = await rawRequest(h.port, { path: '/items', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': String(big.length) }, chunks: [big] });
  assert.is(r.status, 413);
  assert.equal(JSON.parse(r.body), { detail: 'Request body exceeds 1048576 bytes' });
});

T('body over 1 MiB → 413 when streamed chunked (no Content-Length)', async () => {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const r = await rawRequest(h.port, { path: '/items', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, chunks: Array(20).fill(chunk) });
  assert.is(r.status, 413);
  assert.equal(JSON.parse(r.body), { detail: 'Request body exceeds 1048576 bytes' });
  // The server is still healthy afterwards.
  assert.is((await h.fetch('/health')).status, 200);
});

T('exactly 1 MiB is accepted (limit is inclusive)', async () => {
  const pad = 1_048_576 - JSON.stringify({ title: 'x', meta: { p: '' } }).length;
  const body = JSON.stringify({ title: 'x', meta: { p: 'y'.repeat(pad) } });
  assert.is(Buffer.byteLength(body), 1_048_576);
  assert.is((await h.fetch('/items', json(body))).status, 201);
});

T('rawBody routes get the bytes unparsed', async () => {
  const r = await h.fetch('/raw', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'not json at all' });
  assert.equal(await r.json(), { bytes: 15 });
});

T('rawBody routes with verify and a body: the exact bytes are verified first (no bearer needed), then parsed and validated', async () => {
  const body = '{"title":"caf\u00e9"}';
  const send = (headers: Record<string, string>, b = body) => h.fetch('/signed', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
  assert.is((await send({})).status, 401);
  assert.is((await send({ 'x-sig': 'len=1' })).status, 401);
  const ok = await send({ 'x-sig': `len=${Buffer.byteLength(body)}` });
  assert.equal([ok.status, await ok.json()], [200, { title: 'café', bytes: Buffer.byteLength(body) }]);
  const invalid = await send({ 'x-sig': 'len=2' }, '{}');
  assert.equal([invalid.status, (await invalid.json()).detail[0].loc], [422, ['body', 'title']]);
  assert.is((await send({ 'x-sig': 'len=9' }, '{')).status, 401, 'unparseable bytes are refused by the signature first');
  assert.is((await send({ 'x-sig': 'len=1' }, '{')).status, 422, 'and, signed, parsed after it');
});

T('undefined → 204, reply() keeps status and headers', async () => {
  const d = await h.fetch('/items/abc', { method: 'DELETE', token: ADMIN });
  assert.is(d.status, 204);
  assert.is(await d.text(), '');
  const t = await h.fetch('/teapot');
  assert.is(t.status, 418);
  assert.is(t.headers.get('x-tea'), 'earl grey');
});

T('unknown path → 404, other method → 405 with Allow', async () => {
  let r = await h.fetch('/nothing/here', { token: ADMIN });
  assert.is(r.status, 404);
  assert.equal(await r.json(), { detail: 'Not Found' });
  r = await h.fetch('/items/abc', { method: 'PUT', token: ADMIN });
  assert.is(r.status, 405);
  assert.equal(await r.json(), { detail: 'Method Not Allowed' });
  assert.is(r.headers.get('allow'), 'GET, HEAD, DELETE');
});

T('x-request-id is echoed when sane and generated otherwise', async () => {
  let r = await h.fetch('/health', { headers: { 'x-request-id': 'req-42' } });
  assert.is(r.headers.get('x-request-id'), 'req-42');
  r = await h.fetch('/nothing', { headers: { 'x-request-id': 'bad id with spaces' } });
  assert.match(r.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

const P = suite('nesting scan (pure)');

P('brackets inside strings and escaped quotes do not count as nesting', () => {
  assert.is(depthExceeded('{"a":"[[[[[[[[[["}', 3), -1);
  assert.is(depthExceeded('{"a":"\\"[[[[[[[\\""}', 3), -1);
  assert.is(depthExceeded('[[[1]]]', 3), -1);
  assert.is(depthExceeded('[[[[1]]]]', 3), 3);
  assert.is(depthExceeded('[[],[],[[]]]', 3), -1, 'siblings do not add up');
  assert.is(depthExceeded('[[],[],[[]]]', 2), 8);
});

T.run();
P.run();
