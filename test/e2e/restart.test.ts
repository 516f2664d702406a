// A server SIGKILLed in the middle of two runs: the surviving agent is adopted and merged, the dead one's
// task is settled, and its commits (and uncommitted files) survive in the graveyard.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { fake, writeFakeAgentConfig } from './fake-config.ts';

const T = suite('e2e: restart');
let repo: TempRepo;
let server: RunningServer | undefined;
const pids = new Set<number>();
T.after.each(async () => {
  await server?.stop();
  server = undefined;
  for (const pid of pids) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
  repo.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logOf = (sid: string) => { try { return readFileSync(join(repo.dir, '.sdd', 'runtime', 'logs', `${sid}.log`), 'utf8'); } catch { return ''; } };

async function poll<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server?.output().slice(-3000)}`);
    await sleep(50);
  }
}

T('SIGKILL of the server mid-run: the live agent is adopted and merged, the dead one settled, no commit lost', async () => {
  repo = makeRepo('svc-restart-');
  writeFakeAgentConfig(repo.dir);
  server = await startServer(repo.dir);
  const port = server.port;
  const survivor = (await server.api('POST', '/tasks', { title: 'survives', description: fake('edit file=a.txt content=A', 'commit message=a', 'log text=a-ready', 'sleep ms=5000', 'complete retry_s=60') })).body;
  const doomed = (await server.api('POST', '/tasks', { title: 'dies', max_retries: 0, description: fake('edit file=b.txt content=B', 'commit message=b', 'edit file=b2.txt content=not committed', 'log text=b-ready', 'hang') })).body;
  const sessions = await poll('both agents ready', async () => {
    const list = (await server!.api('GET', '/agents')).body as any[];
    const a = list.find((e) => e.task_id === survivor.id && !e.synthetic);
    const b = list.find((e) => e.task_id === doomed.id && !e.synthetic);
    return a && b && /a-ready 1/.test(logOf(a.session_id)) && /b-ready 1/.test(logOf(b.session_id)) ? { a, b } : undefined;
  });
  pids.add(sessions.a.pid).add(sessions.b.pid);
  await server.kill();
  // The survivor completes 5 s after it was ready; a restart slower than that (a loaded machine) finds it retrying.
  // The second agent dies with the server (a machine crash, an OOM kill): nothing records its exit.
  process.kill(-sessions.b.pid, 'SIGKILL');
  server = await startServer(repo.dir, { args: ['--port', String(port)] });
  assert.is(server.port, port, 'same address, so the adopted agent can still report');

  const closed = await poll('survivor closed', async () => ((await server!.api('GET', `/tasks/${survivor.id}`)).body.status === 'closed' ? true : undefined), 40_000);
  assert.ok(closed);
  assert.is(repo.git('show', 'main:a.txt'), 'A');
  const dead = await poll('doomed settled', async () => {
    const t = (await server!.api('GET', `/tasks/${doomed.id}`)).body;
    return t.status === 'failed' ? t : undefined;
  });
  assert.is(dead.failure.type, 'agent_exit');
  assert.match(dead.failure.reason, /retries exhausted/);
  const grave = `refs/sdd/graveyard/${sessions.b.session_id}`;
  // The task fails first; retiring its session (which keeps the work in the graveyard) follows on a later tick.
  await poll('the graveyard ref', async () => repo.git('for-each-ref', grave) !== '');
  assert.is(repo.git('show', `${grave}:b.txt`), 'B', 'committed work kept');
  assert.is(repo.git('show', `${grave}:b2.txt`), 'not committed', 'uncommitted work kept too');
  assert.ok(repo.git('log', '--format=%s', grave).split('\n').includes('b'), 'the agent commit itself');
  // Retiring removes the worktree, then the merged branch: wait for both.
  await poll('no worktree or agent branch left', async () => repo.git('worktree', 'list').split('\n').length === 1 && repo.git('for-each-ref', 'refs/heads/agent/') === '');
  assert.match(server.output(), new RegExp(`adopted session ${sessions.a.session_id}`));
});

T.run();
