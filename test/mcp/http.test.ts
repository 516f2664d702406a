// /mcp on a real `svc up` driven by the MCP SDK's own client: tools, schemas, errors, auth, resources, the prompt.
import { discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addTenant, createToken } from '../../src/auth/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { ALL_TOOLS, call, connect, toolNames } from './support.ts';

const T = suite('mcp: /mcp over streamable HTTP');
let repo: TempRepo;
let s: RunningServer;
T.before(async () => {
  repo = makeRepo('svc-mcp-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
T.after(async () => { await s.stop(); repo.cleanup(); });

const create = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/tasks', body);
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
};
const status = async (id: string) => (await s.api('GET', `/tasks/${id}`)).body.status;
const agentToken = async (taskId: string) => (await createToken(sddLayout(repo.dir), { role: 'agent', taskId, tenant: 'default' }, systemClock)).token;

T('tools/list: the twelve tools with valid JSON Schemas from the API\'s shapes; the prompt and the resource templates', async () => {
  const c = await connect(s, s.token);
  const { tools } = await c.client.listTools();
  assert.equal(tools.map((t) => t.name), ALL_TOOLS);
  const ajv = new Ajv({ strict: false });
  for (const t of tools) {
    assert.is(t.inputSchema.type, 'object', t.name);
    ajv.compile(t.inputSchema);
    assert.ok(t.description && t.description.length > 20, `${t.name} has a description`);
  }
  const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema as any;
  assert.equal(schema('next_task').required, ['role']);
  assert.equal(schema('next_task').properties.wait_s.maximum, 60);
  assert.equal(schema('complete_task').required, ['result_summary'], 'task_id may be left out with a task token');
  assert.equal(schema('complete_task').properties.payload.properties.outcome.anyOf.map((o: any) => o.const), ['completed', 'refused']);
  assert.equal(schema('create_subtask').required, ['title']);
  assert.equal(schema('report_progress').properties.percent.maximum, 100);
  assert.is(tools.find((t) => t.name === 'get_task')!.annotations?.readOnlyHint, true);
  const { prompts } = await c.client.listPrompts();
  assert.equal(prompts.map((p) => [p.name, p.arguments?.map((a) => `${a.name}${a.required ? '!' : ''}`)]), [['work_next_task', ['role!', 'wait_s']]]);
  const prompt = await c.client.getPrompt({ name: 'work_next_task', arguments: { role: 'backend' } });
  assert.match((prompt.messages[0]!.content as { text: string }).text, /Call next_task with role "backend" and wait_s 30/);
  await c.client.getPrompt({ name: 'work_next_task', arguments: { role: 'Not A Role' } }).then(() => assert.unreachable('bad role'), (e) => assert.instance(e, McpError));
  const { resourceTemplates } = await c.client.listResourceTemplates();
  assert.equal(resourceTemplates.map((r) => r.uriTemplate), ['svc://task/{task_id}', 'svc://task/{task_id}/gates']);
  await c.close();
});

T('claim → progress → complete with the tools, each step on GET /tasks; list, search, graph and status read the same board', async () => {
  const a = await create({ title: 'mcp first', role: 'mcpflow', priority: 1 });
  const b = await create({ title: 'mcp second', role: 'mcpflow', priority: 5, depends_on: [a.id] });
  const c = await connect(s, s.token);
  const claimed = await call(c.client, 'next_task', { role: 'mcpflow' });
  assert.ok(claimed.ok, claimed.text);
  assert.equal([claimed.value.id, claimed.value.status, await status(a.id)], [a.id, 'claimed', 'claimed']);
  const progressed = await call(c.client, 'report_progress', { task_id: a.id, message: 'half way', percent: 50, files_changed: 2, tests_passing: 3, errors: 0 });
  assert.ok(progressed.ok, progressed.text);
  assert.is(await status(a.id), 'in_progress');
  assert.is((await s.api('GET', `/tasks/${a.id}/progress`)).body.latest.files_changed, 2);
  const card = ((await s.api('GET', '/dashboard/data')).body.tasks as any[]).find((t) => t.id === a.id);
  assert.equal([card.status, card.progress, card.progress_message], ['in_progress', 50, 'half way'], 'the live board shows the report');
  assert.is((await call(c.client, 'get_task', { task_id: a.id })).value.title, 'mcp first');
  const listed = await call(c.client, 'list_tasks', { role: 'mcpflow' });
  assert.equal([listed.value.total, listed.value.tasks.map((t: any) => [t.id, t.status])], [2, [[a.id, 'in_progress'], [b.id, 'open']]]);
  assert.equal((await call(c.client, 'search_tasks', { q: 'mcp second' })).value.tasks.map((t: any) => t.id), [b.id]);
  const graph = await call(c.client, 'task_graph', {});
  assert.ok(graph.value.edges.some((e: any) => e.from === a.id && e.to === b.id) || graph.value.edges.some((e: any) => e.to === a.id && e.from === b.id), graph.text);
  assert.equal((await call(c.client, 'task_graph', { task_id: b.id })).value.upstream.map((t: any) => t.id), [a.id]);
  const board = await call(c.client, 'board_status');
  assert.equal([board.value.counts.in_progress >= 1, board.value.open_by_role.mcpflow], [true, 1]);
  const payload = { outcome: 'completed', files_changed: ['a.ts'], commits: ['abc1234'], tests: { passed: 3, failed: 0 }, notes: 'via MCP' };
  const done = await call(c.client, 'complete_task', { task_id: a.id, result_summary: 'did it', payload });
  assert.ok(done.ok, done.text);
  const onBoard = (await s.api('GET', '/tasks?status=done')).body as any[];
  assert.equal(onBoard.filter((t) => t.id === a.id).map((t) => [t.status, t.result_summary]), [['done', 'did it']]);
  // Release hands a claim back; fail ends it with the reason.
  const next = await call(c.client, 'next_task', { role: 'mcpflow' });
  assert.is(next.value?.id, b.id, next.text);
  assert.is((await call(c.client, 'release_task', { task_id: b.id, reason: 'not now' })).value.status, 'open');
  assert.is(await status(b.id), 'open');
  await call(c.client, 'next_task', { role: 'mcpflow' });
  const failed = await call(c.client, 'fail_task', { task_id: b.id, reason: 'cannot' });
  assert.equal([failed.value.status, await status(b.id)], ['failed', 'failed']);
  await c.close();
});

T('next_task waits up to wait_s for a task; subtasks: the parent waits and completes when they do', async () => {
  const c = await connect(s, s.token);
  const waiting = call(c.client, 'next_task', { role: 'mcplate', wait_s: 20 });
  await new Promise((r) => setTimeout(r, 300));
  const late = await create({ title: 'arrives later', role: 'mcplate' });
  assert.is((await waiting).value.id, late.id);
  const child = await call(c.client, 'create_subtask', { parent_task_id: late.id, title: 'the part', role: 'mcpchild' });
  assert.ok(child.ok, child.text);
  assert.is(await status(late.id), 'waiting_for_subtasks');
  const parked = await call(c.client, 'wait_for_subtasks', { task_id: late.id });
  assert.equal([parked.value.settled, parked.value.subtasks.map((t: any) => t.id)], [false, [child.value.id]]);
  const settled = call(c.client, 'wait_for_subtasks', { task_id: late.id, wait_s: 20 });
  assert.ok((await call(c.client, 'complete_task', { task_id: child.value.id, result_summary: 'part done' })).ok);
  const after = await settled;
  assert.equal([after.value.settled, after.value.task.status, await status(late.id)], [true, 'done', 'done']);
  await c.close();
});

T('a client that hangs up during a long next_task is handed nothing: the task stays open', async () => {
  const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const rpc = (body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) => fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
  assert.is((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);
  const hangUp = new AbortController();
  const call = rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'next_task', arguments: { role: 'mcpgone', wait_s: 30 } } }, session, hangUp.signal).catch(() => 'aborted');
  await new Promise((r) => setTimeout(r, 300));
  hangUp.abort();
  assert.is(await call, 'aborted');
  await new Promise((r) => setTimeout(r, 100));
  const t = await create({ title: 'nobody is waiting', role: 'mcpgone' });
  await new Promise((r) => setTimeout(r, 300));
  assert.is(await status(t.id), 'open');
});

T('one token holds at most 32 sessions: opening a 33rd ends its oldest (404), DELETE ends one', async () => {
  const token = (await createToken(sddLayout(repo.dir), { role: 'viewer' }, systemClock)).token;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'many', version: '1' } } };
  const ids: string[] = [];
  for (let i = 0; i < 33; i++) {
    const r = await fetch(`${s.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    assert.is(r.status, 200);
    ids.push(r.headers.get('mcp-session-id')!);
  }
  const list = (id: string) => fetch(`${s.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
  assert.equal([(await list(ids[0]!)).status, (await list(ids[1]!)).status, (await list(ids[32]!)).status], [404, 200, 200]);
  assert.is((await fetch(`${s.url}/mcp`, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': ids[32]! } })).status, 200);
  assert.is((await list(ids[32]!)).status, 404);
});

T('refusals are tool errors carrying the API\'s status and detail; an unknown tool is a protocol error', async () => {
  const c = await connect(s, s.token);
  const noRole = await call(c.client, 'next_task', {});
  assert.equal([noRole.ok, noRole.text, noRole.value.status, noRole.value.detail[0].loc], [false, '422: role: Expected required property', 422, ['arguments', 'role']]);
  const tooMuch = await call(c.client, 'report_progress', { task_id: 'x', percent: 150 });
  assert.match(tooMuch.text, /^422: percent: /);
  const missing = await call(c.client, 'get_task', { task_id: '01jzzzzzzzzzzzzzzzzzzzzzzz' });
  assert.equal([missing.ok, missing.text], [false, "404: Task '01jzzzzzzzzzzzzzzzzzzzzzzz' not found"]);
  const none = await call(c.client, 'next_task', { role: 'nobody-here' });
  assert.is(none.text, "404: No open tasks for role 'nobody-here'");
  const open = await create({ title: 'stays open', role: 'mcperr' });
  assert.match((await call(c.client, 'release_task', { task_id: open.id })).text, /^409: /);
  // The completion contract decides a structured payload: a violation fails the task, as POST /complete does.
  await call(c.client, 'next_task', { role: 'mcperr' });
  const bad = await call(c.client, 'complete_task', { task_id: open.id, result_summary: 'done', payload: { outcome: 'maybe' } });
  assert.equal([bad.ok, bad.value.status, bad.value.task.status, await status(open.id)], [false, 422, 'failed', 'failed']);
  assert.match(bad.text, /^422: completion contract violation at \/outcome/);
  await c.client.callTool({ name: 'no_such_tool', arguments: {} }).then(() => assert.unreachable('unknown tool'), (e) => {
    assert.instance(e, McpError);
    assert.is((e as McpError).code, -32602);
  });
  await c.close();
});

T('auth: no or a bad token is 401 naming the resource metadata, which the SDK discovers; a foreign Origin is refused', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  const post = (headers: Record<string, string>) => fetch(`${s.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) });
  for (const [headers, detail] of [[{}, 'Missing or invalid Authorization header'], [{ authorization: 'Bearer not-a-token' }, 'Invalid or expired authentication token']] as const) {
    const r = await post(headers);
    assert.is(r.status, 401);
    assert.is(r.headers.get('www-authenticate'), `Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp"`);
    assert.equal(await r.json(), { detail });
  }
  await connect(s, 'not-a-token').then(() => assert.unreachable('bad token'), (e) => assert.is((e as StreamableHTTPError).code, 401));
  const meta = await discoverOAuthProtectedResourceMetadata(`${s.url}/mcp`);
  OAuthProtectedResourceMetadataSchema.parse(meta);
  assert.equal([meta.resource, meta.authorization_servers, meta.bearer_methods_supported], [`${s.url}/mcp`, [s.url], ['header']]);
  const foreign = await post({ authorization: `Bearer ${s.token}`, origin: 'http://evil.example' });
  assert.is(foreign.status, 403);
  assert.is((await post({ authorization: `Bearer ${s.token}`, origin: s.url })).status, 200);
});

T('a task token: only its task\'s tools, its task by default, 403 on another task; its resources and their updates', async () => {
  const mine = await create({ title: 'agent work', role: 'mcpagent' });
  const other = await create({ title: 'not yours', role: 'mcpagent' });
  assert.is((await s.api('POST', `/tasks/${mine.id}/claim`)).status, 200);
  const token = await agentToken(mine.id);
  const c = await connect(s, token);
  assert.equal(await toolNames(c.client), ['get_task', 'report_progress', 'complete_task', 'fail_task', 'release_task', 'create_subtask', 'wait_for_subtasks', 'task_graph']);
  assert.is((await call(c.client, 'get_task')).value.id, mine.id);
  const scoped = `403: token is scoped to task '${mine.id}'`;
  assert.is((await call(c.client, 'get_task', { task_id: other.id })).text, `${scoped}: task '${other.id}' is not its task`);
  assert.is((await call(c.client, 'complete_task', { task_id: other.id, result_summary: 'x' })).text, `${scoped}: task '${other.id}' is not its task`);
  assert.is((await call(c.client, 'next_task', { role: 'mcpagent' })).text, `${scoped}: this endpoint is outside its task`);
  assert.is((await call(c.client, 'create_subtask', { parent_task_id: other.id, title: 'sneaky' })).text, `${scoped}: subtasks go under its own task only`);
  assert.equal((await c.client.listResources()).resources.map((r) => r.uri), [`svc://task/${mine.id}`]);
  const read = await c.client.readResource({ uri: `svc://task/${mine.id}` });
  assert.is(JSON.parse((read.contents[0] as { text: string }).text).id, mine.id);
  await c.client.readResource({ uri: `svc://task/${other.id}` }).then(() => assert.unreachable('other task'), (e) => assert.match((e as McpError).message, /403: token is scoped/));
  await c.client.readResource({ uri: `svc://task/${mine.id}/gates` }).then(() => assert.unreachable('no report yet'), (e) => assert.is((e as McpError).code, -32002));
  // Another token cannot use this session.
  const stolen = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'mcp-session-id': c.transport.sessionId!, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
  assert.is(stolen.status, 404);
  const updates: string[] = [];
  c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); });
  await c.client.subscribeResource({ uri: `svc://task/${mine.id}` });
  assert.ok((await call(c.client, 'report_progress', { message: 'started' })).ok);
  const done = await call(c.client, 'complete_task', { result_summary: 'finished by the agent' });
  assert.equal([done.value.status, await status(mine.id)], ['done', 'done']);
  for (let i = 0; i < 100 && updates.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(updates.includes(`svc://task/${mine.id}`), `resource updates: ${JSON.stringify(updates)}`);
  await c.close();
});

T('another tenant\'s token: the task does not exist for it, and its lists and claims stay in its own tenant', async () => {
  const victim = await create({ title: 'default tenant secret', role: 'mcptenant' });
  await addTenant(sddLayout(repo.dir), 'acme');
  const acme = (await createToken(sddLayout(repo.dir), { role: 'operator', tenant: 'acme' }, systemClock)).token;
  const c = await connect(s, acme);
  assert.is((await call(c.client, 'get_task', { task_id: victim.id })).text, `404: Task '${victim.id}' not found`);
  assert.is((await call(c.client, 'complete_task', { task_id: victim.id, result_summary: 'x' })).text, `404: Task '${victim.id}' not found`);
  assert.is((await call(c.client, 'next_task', { role: 'mcptenant' })).text, "404: No open tasks for role 'mcptenant'");
  assert.is((await call(c.client, 'list_tasks', {})).value.total, 0);
  assert.is((await call(c.client, 'search_tasks', { q: 'secret' })).value.total, 0);
  await c.client.readResource({ uri: `svc://task/${victim.id}` }).then(() => assert.unreachable('other tenant'), (e) => assert.is((e as McpError).code, -32002));
  // Naming the other tenant is refused at the door, as the API refuses it.
  await connect(s, acme, { 'x-tenant-id': 'default' }).then(() => assert.unreachable('bound token'), (e) => assert.is((e as StreamableHTTPError).code, 403));
  assert.is(await status(victim.id), 'open');
  await c.close();
});

T.run();
