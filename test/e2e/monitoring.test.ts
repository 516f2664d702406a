// Watching agents from the command line against a real `svc up` running the fake agent.
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, svcArgv, type RunningServer } from '../helpers/server.ts';
import { fake, writeFakeAgentConfig } from './fake-config.ts';

const T = suite('e2e: svc agents, logs, kill, Ctrl-C, and agents running svc');
let repo: TempRepo;
let server: RunningServer | undefined;
T.before(async () => {
  repo = makeRepo('svc-mon-');
  writeFakeAgentConfig(repo.dir);
  server = await startServer(repo.dir, { args: ['--max-agents', '3'] });
});
T.after(async () => { await server?.kill(); repo.cleanup(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const svc = (...args: string[]) => runCli(args, { cwd: repo.dir, env: { SERVICE_AUTH_TOKEN: server!.token } });
async function until<T>(what: string, get: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
    const v = await get();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${what}:\n${server!.output().slice(-3000)}`);
}
const taskOf = async (id: string) => (await server!.api('GET', `/tasks/${id}`)).body;
const sessionOf = (id: string) => until(`a running session of ${id}`, async () => ((await server!.api('GET', '/agents')).body as any[]).find((e) => e.task_id === id && e.status === 'running'));

T('an agent runs `svc task complete` from its PATH: the server put its own svc there', async () => {
  const t = (await server!.api('POST', '/tasks', { title: 'report through the CLI', description: fake('svc-complete summary=reported by svc on PATH') })).body;
  const done = await until('closed', async () => { const x = await taskOf(t.id); return x.status === 'closed' ? x : undefined; });
  assert.is(done.result_summary, 'reported by svc on PATH');
});

T('svc agents lists the session, svc logs prints and -f follows its log, svc kill blocks the task', async () => {
  const t = (await server!.api('POST', '/tasks', { title: 'watch me', description: fake('log lines=1 text=before', 'sleep ms=1500', 'log lines=1 text=after', 'hang') })).body;
  const s = await sessionOf(t.id);
  const agents = await svc('agents');
  assert.is(agents.code, 0, agents.stderr);
  assert.match(agents.stdout, new RegExp(`${s.session_id}\\s+running\\s+backend\\s+generic.*${t.id}\\s+watch me`));
  const follower = spawn(process.execPath, svcArgv('logs', s.session_id, '-f'), { cwd: repo.dir, env: { ...process.env, SERVICE_AUTH_TOKEN: server!.token } });
  let followed = '';
  follower.stdout.on('data', (d) => (followed += d));
  try {
    await until('the followed log to show a line written later', async () => (/\nafter 1\n/.test(followed) ? true : undefined));
  } finally {
    follower.kill();
  }
  assert.match(followed, /before 1\n/, 'the log so far, then the new lines');
  assert.not.match(followed, /event:|data:/, 'plain text, not SSE frames');
  const logs = await svc('logs', s.session_id);
  assert.match(logs.stdout, /fake-agent: hang/);
  const kill = await svc('kill', s.session_id);
  assert.is(kill.code, 0, kill.stderr);
  const blocked = await until('blocked', async () => { const x = await taskOf(t.id); return x.status === 'blocked' ? x : undefined; });
  assert.is(blocked.status_reason, 'killed by env');
  await sleep(600);
  assert.is((await taskOf(t.id)).status, 'blocked', 'not dispatched again');
});

T('Ctrl-C says which agents keep running and that the next start adopts them', async () => {
  const t = (await server!.api('POST', '/tasks', { title: 'outlives the server', description: fake('hang') })).body;
  const s = await sessionOf(t.id);
  const code = await server!.stop('SIGINT');
  assert.is(code, 0);
  assert.match(server!.output(), new RegExp(`SIGINT: stopped; 1 agent\\(s\\) keep running: ${s.session_id} \\(pid ${s.pid}, task ${t.id}\\)\\. The next 'svc up' here adopts them`));
  process.kill(-s.pid, 'SIGKILL');
  server = undefined;
});

T.run();
