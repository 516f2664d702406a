// `svc mcp` as a child process driven by the MCP SDK's stdio client, as an agent CLI runs it.
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '../../src/auth/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, svcArgv, type RunningServer } from '../helpers/server.ts';
import { ALL_TOOLS, call, toolNames } from './support.ts';

const T = suite('mcp: svc mcp over stdio');
let repo: TempRepo;
let s: RunningServer;
// A folder without .sdd and a HOME without stored logins: the child finds no token but the one it is given.
const bare = makeTempDir('svc-mcp-bare-');
T.before(async () => {
  repo = makeRepo('svc-mcp-stdio-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'], port: await freePort() });
});
T.after(async () => { await s.stop(); repo.cleanup(); bare.cleanup(); });
// A client left open by a failed test would keep its svc mcp child, and this process, alive.
const open: Client[] = [];
T.after.each(async () => { await Promise.all(open.splice(0).map((c) => c.close())); });

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const childEnv = (token?: string): Record<string, string> => {
  const env = { ...process.env, HOME: bare.dir, XDG_CONFIG_HOME: bare.dir, SERVICE_SERVER_URL: s.url, NO_COLOR: '1' } as Record<string, string>;
  delete env.SERVICE_AUTH_TOKEN;
  return token ? { ...env, SERVICE_AUTH_TOKEN: token } : env;
};

/** `svc mcp` started by the SDK's stdio client with `token` in its environment. */
async function svcMcp(token?: string): Promise<{ client: Client; stderr: () => string }> {
  const [command, ...args] = [process.execPath, ...svcArgv('mcp')];
  const transport = new StdioClientTransport({ command: command!, args, env: childEnv(token), cwd: bare.dir, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => (err += d));
  const client = new Client({ name: 'svc-stdio-test', version: '1' });
  open.push(client);
  await client.connect(transport);
  return { client, stderr: () => err };
}

const create = async (body: Record<string, unknown>) => (await s.api('POST', '/tasks', body)).body;
const status = async (id: string) => (await s.api('GET', `/tasks/${id}`)).body.status;

T('every tool through svc mcp: claim → progress → complete on the board, subtasks, release, fail, and a schema error', async () => {
  const a = await create({ title: 'stdio first', role: 'stdio', priority: 1 });
  const b = await create({ title: 'stdio second', role: 'stdio', priority: 3 });
  const { client } = await svcMcp(s.token);
  assert.equal(await toolNames(client), ALL_TOOLS);
  assert.is((await call(client, 'next_task', { role: 'stdio' })).value.id, a.id);
  assert.ok((await call(client, 'report_progress', { task_id: a.id, message: 'on it', percent: 30 })).ok);
  assert.is(await status(a.id), 'in_progress');
  assert.is((await call(client, 'get_task', { task_id: a.id })).value.status, 'in_progress');
  assert.equal((await call(client, 'list_tasks', { role: 'stdio' })).value.total, 2);
  assert.equal((await call(client, 'search_tasks', { q: 'stdio second' })).value.tasks.map((t: any) => t.id), [b.id]);
  assert.ok((await call(client, 'task_graph')).value.nodes.length >= 2);
  assert.is((await call(client, 'board_status')).value.open_by_role.stdio, 1);
  const child = await call(client, 'create_subtask', { parent_task_id: a.id, title: 'stdio part', role: 'stdiochild' });
  assert.is((await call(client, 'wait_for_subtasks', { task_id: a.id })).value.settled, false);
  assert.ok((await call(client, 'complete_task', { task_id: child.value.id, result_summary: 'part done' })).ok);
  assert.is(await status(a.id), 'done', 'the parent completes with its only subtask');
  assert.is((await call(client, 'next_task', { role: 'stdio' })).value.id, b.id);
  assert.is((await call(client, 'release_task', { task_id: b.id })).value.status, 'open');
  await call(client, 'next_task', { role: 'stdio' });
  assert.is((await call(client, 'fail_task', { task_id: b.id, reason: 'no' })).value.status, 'failed');
  const tasks = (await s.api('GET', '/tasks')).body as any[];
  assert.equal(tasks.filter((t) => t.role.startsWith('stdio')).map((t) => [t.title, t.status]), [['stdio first', 'done'], ['stdio second', 'failed'], ['stdio part', 'done']]);
  assert.is((await call(client, 'next_task', { wait_s: 99 })).text, '422: role: Expected required property; wait_s: Expected number to be less or equal to 60');
  await client.close();
});

T('auth through svc mcp: no token and a bad token fail with the server\'s 401; a task token is refused another task', async () => {
  await Promise.all(([[undefined, 'Missing or invalid Authorization header'], ['not-a-token', 'Invalid or expired authentication token']] as const).map(([token, detail]) =>
    svcMcp(token).then(() => assert.unreachable('refused'), (e) => assert.match((e as Error).message, `answered 401: ${detail}`))));
  const mine = await create({ title: 'stdio agent', role: 'stdioagent' });
  const other = await create({ title: 'stdio other', role: 'stdioagent' });
  await s.api('POST', `/tasks/${mine.id}/claim`);
  const token = (await createToken(sddLayout(repo.dir), { role: 'agent', taskId: mine.id, tenant: 'default' }, systemClock)).token;
  const { client } = await svcMcp(token);
  assert.is((await call(client, 'report_progress', { task_id: other.id, message: 'x' })).text, `403: token is scoped to task '${mine.id}': task '${other.id}' is not its task`);
  assert.ok((await call(client, 'complete_task', { result_summary: 'done through svc mcp' })).ok);
  assert.equal([await status(mine.id), await status(other.id)], ['done', 'open']);
  await client.close();
});

T('svc mcp --check: the tools a token may use, exit 4 when refused and 5 when no server answers', async () => {
  const unused = await freePort();
  const [ok, refused, down] = await Promise.all([
    runCli(['mcp', '--check'], { cwd: bare.dir, env: childEnv(s.token) }),
    runCli(['mcp', '--check'], { cwd: bare.dir, env: childEnv('not-a-token') }),
    runCli(['mcp', '--check', '--server', `http://127.0.0.1:${unused}`], { cwd: bare.dir, env: childEnv(s.token) }),
  ]);
  assert.is(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, `${s.url}/mcp: 12 tools: next_task, get_task`);
  assert.equal([refused.code, refused.stderr.trim()], [4, `svc mcp: svc at ${s.url} answered 401: Invalid or expired authentication token`]);
  assert.is(down.code, 5);
  assert.match(down.stderr, /cannot reach svc at .*ECONNREFUSED.*is 'svc up' running/);
});

T('a server restart under a running svc mcp: the next call opens a new session and works', async () => {
  const t = await create({ title: 'survives a restart', role: 'stdiorestart' });
  const { client, stderr } = await svcMcp(s.token);
  assert.ok((await call(client, 'get_task', { task_id: t.id })).ok);
  await s.stop();
  s = await startServer(repo.dir, { args: ['--no-orchestrator'], port: s.port });
  const again = await call(client, 'get_task', { task_id: t.id });
  assert.ok(again.ok, again.text);
  assert.match(stderr(), /lost the session \(restarted\?\): opened a new one/);
  assert.is((await call(client, 'next_task', { role: 'stdiorestart' })).value.id, t.id);
  await client.close();
});

T.run();
