import { createServer } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';

// What a newcomer types in their repository, against a real `svc up` (no SERVICE_* in the CLI's environment:
// it finds the server and the token through the repository's .sdd, as README says).
const F = suite('svc CLI in a repository: the first hour');
let repo: TempRepo;
let s: RunningServer;
F.before(async () => {
  repo = makeRepo('svc-cli-');
  // No SERVICE_AUTH_TOKEN: the first start writes .sdd/secrets/admin.token, which the CLI then finds.
  s = await startServer(repo.dir, { args: ['--no-orchestrator'], env: { SERVICE_AUTH_TOKEN: '' }, token: '' });
  s.token = readFileSync(join(repo.dir, '.sdd', 'secrets', 'admin.token'), 'utf8').trim();
});
F.after(async () => { await s?.stop(); repo?.cleanup(); });

const env = { SERVICE_AUTH_TOKEN: '', SERVICE_SERVER_URL: '' };
const svc = (...args: string[]) => runCli(args, { cwd: repo.dir, env });
const post = async (path: string, body: unknown) => (await fetch(`${s.url}${path}`, {
  method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
})).json() as Promise<any>;

F('list shows unfinished tasks newest first with long titles cut; --all adds finished ones; ids work by unique prefix', async () => {
  const old = await post('/tasks', { title: 'Old task that was cancelled' });
  await post(`/tasks/${old.id}/cancel`, {});
  const a = await post('/tasks', { title: 'Write the migration for the accounts table and backfill every row we already have in production' });
  const b = await post('/tasks', { title: 'Review it' });
  const [list, all, shown, bad] = await Promise.all([svc('task', 'list'), svc('task', 'list', '--all'), svc('task', 'show', b.id.slice(0, 20)), svc('task', 'list', '--status', 'opne')]);
  assert.is(list.code, 0, list.stderr);
  const rows = list.stdout.trim().split('\n');
  assert.match(rows[1]!, new RegExp(`^${b.id}\\s+open\\s+backend\\s+2\\s+Review it$`), 'newest first');
  assert.match(rows[2]!, /Write the migration for the accounts table and backfill eve…$/, 'long titles end in …');
  assert.not.match(list.stdout, /cancelled/);
  assert.match(list.stdout, /\(2 of 2; --all shows finished tasks too\)/);
  assert.match(all.stdout, /cancelled\s+backend\s+2\s+Old task/);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^id\\s+${b.id}\\ntitle\\s+Review it\\nstatus\\s+open`));
  assert.is(bad.code, 1);
  assert.is(bad.stderr, 'svc task list: GET /tasks/search → 422: status must be one of open, claimed, in_progress, done, failed, closed, blocked, waiting_for_subtasks, refused, cancelled, orphaned\n');
  assert.is(bad.stderr.split('\n').length, 2, 'one line');
  await post(`/tasks/${b.id}/block`, { reason: 'merge conflict: x' });
  const [short, none, closed] = await Promise.all([svc('task', 'show', a.id.slice(0, 5)), svc('task', 'show', 'zzzzzzz'), svc('task', 'close', b.id, '--merged', '--json')]);
  assert.is(closed.code, 0, closed.stderr);
  assert.is(JSON.parse(closed.stdout).status, 'closed', 'close --merged closes a blocked task');
  assert.is(short.code, 3, 'a prefix under 6 characters is taken as an id: not found');
  assert.is(none.code, 3);
  assert.match(none.stderr, /no task id starts with 'zzzzzzz'/);
});

F('search finds words of title and description; graph prints the tree, the critical path and bottlenecks', async () => {
  const root = await post('/tasks', { title: 'Design the schema', description: 'tables for invoices', estimated_minutes: 20 });
  const mid = await post('/tasks', { title: 'Invoice API', depends_on: [root.id], estimated_minutes: 40 });
  await post('/tasks', { title: 'Invoice UI', depends_on: [mid.id] });
  await post('/tasks', { title: 'Invoice emails', depends_on: [mid.id] });
  const [found, graph] = await Promise.all([svc('task', 'search', 'INVOICE'), svc('task', 'graph')]);
  assert.is(found.code, 0, found.stderr);
  for (const t of ['Design the schema', 'Invoice API', 'Invoice UI', 'Invoice emails']) assert.match(found.stdout, t);
  assert.is(graph.code, 0, graph.stderr);
  assert.match(graph.stdout, new RegExp(`${root.id}\\s+open\\s+Design the schema\\n└─ ${mid.id}\\s+open\\s+Invoice API\\n   ├─ \\w+\\s+open\\s+Invoice UI\\n   └─ \\w+\\s+open\\s+Invoice emails`));
  assert.match(graph.stdout, new RegExp(`critical path \\(90 min\\): ${root.id} Design the schema → ${mid.id} Invoice API → `));
  assert.match(graph.stdout, new RegExp(`bottlenecks: ${root.id} Design the schema, ${mid.id} Invoice API`));
});

F('with a stale SERVICE_AUTH_TOKEN in the environment, a 401 says which token was used and that the repository has its own', async () => {
  const r = await runCli(['task', 'list'], { cwd: repo.dir, env: { SERVICE_AUTH_TOKEN: 'token-of-another-repository' } });
  assert.is(r.code, 4);
  assert.match(r.stderr, /401: .*\(used SERVICE_AUTH_TOKEN from the environment; this repository's .*\.sdd\/secrets\/admin\.token holds another one \(unset SERVICE_AUTH_TOKEN to use it\)\)/);
});

F('tenant set default works in a fresh repository, and token list hides the dead tokens of agent runs unless --all', async () => {
  const fresh = makeRepo('svc-fresh-');
  try {
    const set = await runCli(['tenant', 'set', 'default', '--max-tasks', '5000'], { cwd: fresh.dir, env });
    assert.is(set.code, 0, set.stderr);
    assert.match(set.stdout, /default\s+5000\s+true/);
  } finally {
    fresh.cleanup();
  }
  const run = await svc('token', 'create', '--role', 'agent', '--task', 'x', '--label', 'agent session backend-1', '--json');
  const person = await svc('token', 'create', '--role', 'viewer', '--label', 'dashboard', '--json');
  const runId = JSON.parse(run.stdout).id as string;
  assert.is((await svc('token', 'revoke', runId)).code, 0);
  const [list, all] = await Promise.all([svc('token', 'list'), svc('token', 'list', '--all')]);
  assert.match(list.stdout, JSON.parse(person.stdout).id);
  assert.not.match(list.stdout, runId);
  assert.match(list.stdout, /1 revoked or expired agent-run token\(s\) hidden; --all shows them/);
  assert.match(all.stdout, new RegExp(`${runId}\\s+agent\\s+revoked`));
});

F('svc up on a port in use says so and exits 1 before creating anything', async () => {
  const other = makeRepo('svc-port-');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const r = await runCli(['up', '--port', String(port)], { cwd: other.dir, env });
    assert.is(r.code, 1);
    assert.is(r.stderr, `svc up: port ${port} is in use (by pid ${process.pid}); use --port (0 picks a free one)\n`);
    assert.not.ok(existsSync(join(other.dir, '.sdd')), 'no .sdd, token or state commit');
    assert.is(other.git('for-each-ref', 'refs/sdd/'), '');
    const again = await runCli(['up', '--port', String(s.port)], { cwd: repo.dir, env });
    assert.is(again.code, 1);
    assert.match(again.stderr, new RegExp(`svc is already running on this repository \\(pid ${s.pid}, port ${s.port}\\)`));
  } finally {
    blocker.close();
    other.cleanup();
  }
});

F.run();
