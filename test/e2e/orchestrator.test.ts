// End to end: a real `svc up --max-agents 2` child process runs the fake agent on tasks created over HTTP.
import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { fake, writeFakeAgentConfig } from './fake-config.ts';

const T = suite('e2e: orchestrator');
let repo: TempRepo;
let server: RunningServer | undefined;
T.after.each(async () => { await server?.stop(); server = undefined; repo.cleanup(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// mode 'mcp': the agent gets the svc MCP server (--mcp-config, as Claude Code does) and reports with its tools.
async function endToEnd(mode: 'http' | 'mcp') {
  repo = makeRepo('svc-e2e-');
  writeFakeAgentConfig(repo.dir, 'gates:\n  - name: has-output\n    command: "test -d out"\n    required: true\n    timeout_s: 30', mode);
  server = await startServer(repo.dir, { args: ['--max-agents', '2'] });
  const s = server;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const steps = ['log lines=2 text=working', 'sleep ms=1200', `edit file=out/${i}.txt content=result ${i}`, `commit message=task ${i}`, 'progress message=committed percent=90', 'log lines=2 text=finishing', 'complete summary=done'];
    const r = await s.api('POST', '/tasks', { title: `task ${i}`, description: fake(...steps) });
    assert.is(r.status, 201);
    ids.push(r.body.id);
  }
  // Find the first task's session and follow its log over SSE while it runs.
  let sid = '';
  let maxRunning = 0;
  for (let i = 0; i < 200 && !sid; i++) {
    const list = (await s.api('GET', '/agents')).body as any[];
    maxRunning = Math.max(maxRunning, list.filter((e) => !e.synthetic && e.status === 'running').length);
    sid = list.find((e) => e.task_id === ids[0] && !e.synthetic)?.session_id ?? '';
    if (!sid) await sleep(25);
  }
  assert.match(sid, /^backend-[0-9a-f]{8}$/);
  const lines: string[] = [];
  const es = new EventSource(`${s.url}/agents/${sid}/stream`, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${s.token}` } }),
  });
  es.addEventListener('log', (e) => lines.push(JSON.parse(e.data).line));
  const deadline = Date.now() + 40_000;
  let statuses: string[] = [];
  while (Date.now() < deadline) {
    const list = (await s.api('GET', '/agents')).body as any[];
    maxRunning = Math.max(maxRunning, list.filter((e) => !e.synthetic && e.status === 'running').length);
    statuses = await Promise.all(ids.map(async (id) => (await s.api('GET', `/tasks/${id}`)).body.status));
    if (statuses.every((x) => x === 'closed') && lines.includes('finishing 2')) break;
    await sleep(50);
  }
  es.close();
  assert.equal(statuses, ['closed', 'closed', 'closed']);
  assert.ok(maxRunning <= 2, `at most 2 agents at once, saw ${maxRunning}`);
  assert.ok(maxRunning >= 1);
  for (const l of ['working 1', 'working 2', 'finishing 1', 'finishing 2']) assert.ok(lines.includes(l), `streamed ${l}: ${JSON.stringify(lines)}`);
  const reported = mode === 'mcp' ? ['fake-agent: mcp report_progress -> ok', 'fake-agent: mcp complete_task -> ok'] : ['fake-agent: POST /tasks/' + ids[0] + '/complete -> 200'];
  for (const l of reported) assert.ok(lines.includes(l), `${mode}: ${l} in ${JSON.stringify(lines)}`);
  for (let i = 0; i < 3; i++) assert.is(repo.git('show', `main:out/${i}.txt`), `result ${i}`);
  const gates = await s.api('GET', `/tasks/${ids[0]}/gates`);
  assert.equal([gates.status, gates.body.overall_pass], [200, true]);
  // Sessions are retired (worktree removed, merged branch deleted) right after the close.
  for (let i = 0; i < 200 && ((await s.api('GET', '/agents')).body as any[]).length > 0; i++) await sleep(25);
  // Every step of every task reaches the state history (the group commit runs every 250 ms, paced by its
  // own cost on a busy machine, so it is waited for).
  // `claim "<title>" (<id>) by backend-…`: the verb, the task's title and id.
  const steps = ids.flatMap((id) => ['claim', 'start', 'complete', 'close'].map((step) => ({ id, step, re: new RegExp(`${step} "[^"\\n]*" \\(${id}\\)${step === 'claim' ? ' by backend-' : ''}`) })));
  let history = '';
  for (const end = Date.now() + 15_000; Date.now() < end; await sleep(100)) {
    history = repo.git('log', '--format=%B', 'refs/sdd/state');
    if (steps.every((x) => x.re.test(history))) break;
  }
  for (const { id, step, re } of steps) assert.match(history, re, `${step} ${id} in history`);
  assert.is(repo.git('worktree', 'list').split('\n').length, 1, 'no worktree left behind');
  assert.is(repo.git('for-each-ref', 'refs/heads/agent/'), '');
  assert.equal((await s.api('GET', '/agents')).body, []);
  const cmp = (await s.api('GET', '/agents/comparison')).body;
  assert.equal([cmp[0].adapter, cmp[0].tasks, cmp[0].succeeded, cmp[0].gate_pass_rate], ['generic', 3, 3, 1]);
}

T('tasks created over HTTP run in agent worktrees, stream their logs live, pass gates, merge into main and close', () => endToEnd('http'));
T('the same with agents that report through the svc MCP server (svc mcp, scoped to their task token)', () => endToEnd('mcp'));

T('--no-orchestrator serves the API but dispatches nothing', async () => {
  repo = makeRepo('svc-e2e-');
  writeFakeAgentConfig(repo.dir);
  server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  const t = (await server.api('POST', '/tasks', { title: 'stays open' })).body;
  await sleep(700);
  assert.is((await server.api('GET', `/tasks/${t.id}`)).body.status, 'open');
  assert.equal((await server.api('GET', '/agents')).body, []);
  assert.is(repo.git('worktree', 'list').split('\n').length, 1);
});

T.run();
