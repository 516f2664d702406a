import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { groupAlive, isAlive, killGroup, readExitCode, spawnAgent, waitForExit } from '../../src/runner/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-agent.mjs', import.meta.url));
const node = process.execPath;
const env = (prompt: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', FAKE_AGENT_PROMPT: prompt });
const Proc = suite('agent process');
let tmp: ReturnType<typeof makeTempDir>;
const started: number[] = [];

// spawnAgent unrefs its child (a server may stop while agents run on); keep this test process alive meanwhile.
let keepAlive: NodeJS.Timeout;
Proc.before.each(() => {
  tmp = makeTempDir('svc-proc-');
  keepAlive = setInterval(() => {}, 1000);
});
Proc.after.each(async () => {
  for (const pid of started.splice(0)) await killGroup(pid, { graceMs: 200 });
  clearInterval(keepAlive);
  tmp.cleanup();
});

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

Proc('stdout and stderr are appended to the log file, and the exit code is known', async () => {
  const log = join(tmp.dir, 'logs', 's1.log');
  const exitFile = join(tmp.dir, 'agents', 's1.exit');
  const first = await spawnAgent({ argv: [node, FAKE], cwd: tmp.dir, env: env('FAKE: log lines=3 text=out\nFAKE: stderr text=err-line\nFAKE: crash code=3'), logFile: log, exitFile });
  assert.equal(await first.exited, { code: 3, signal: null });
  assert.is(await readExitCode(exitFile), 3);
  const second = await spawnAgent({ argv: [node, FAKE], cwd: tmp.dir, env: env('FAKE: log lines=1 text=again'), logFile: log });
  assert.equal(await second.exited, { code: 0, signal: null });
  const text = readFileSync(log, 'utf8');
  for (const line of ['out 1', 'out 2', 'out 3', 'err-line', 'again 1']) assert.ok(text.includes(line), `log lacks ${line}`);
  assert.ok(text.indexOf('out 1') < text.indexOf('again 1'), 'the second run appends, never truncates');
});

Proc('arguments reach the agent exactly, with no shell in between', async () => {
  const log = join(tmp.dir, 'a.log');
  const arg = `it's "quoted" $(echo no) ; *`;
  const p = await spawnAgent({ argv: [node, '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', arg, ''], cwd: tmp.dir, env: env(''), logFile: log, exitFile: join(tmp.dir, 'a.exit') });
  await p.exited;
  assert.equal(JSON.parse(readFileSync(log, 'utf8').trim()), [arg, '']);
});

Proc('killGroup ends the agent and the children it started', async () => {
  const log = join(tmp.dir, 'k.log');
  const p = await spawnAgent({ argv: [node, FAKE], cwd: tmp.dir, env: env('FAKE: child\nFAKE: hang'), logFile: log, exitFile: join(tmp.dir, 'k.exit') });
  started.push(p.pid);
  await until(() => /child pid=(\d+)/.test(readFileSync(log, 'utf8')));
  const childPid = Number(/child pid=(\d+)/.exec(readFileSync(log, 'utf8'))![1]);
  assert.ok(isAlive(p.pid) && isAlive(childPid));
  assert.is(await killGroup(p.pid, { graceMs: 2000 }), 'terminated');
  assert.not.ok(isAlive(childPid), 'the grandchild is gone too');
  assert.not.ok(groupAlive(p.pid));
  assert.ok((await p.exited).signal !== null || (await p.exited).code !== 0);
  assert.is(await readExitCode(join(tmp.dir, 'k.exit')), null, 'a killed agent leaves no exit code');
  assert.is(await killGroup(p.pid), 'absent');
});

Proc('an agent that ignores SIGTERM is killed after the grace period', async () => {
  const log = join(tmp.dir, 't.log');
  const script = join(tmp.dir, 'stubborn.mjs');
  writeFileSync(script, "process.on('SIGTERM', () => console.log('ignoring TERM')); console.log('ready'); setInterval(() => {}, 1000);");
  const p = await spawnAgent({ argv: [node, script], cwd: tmp.dir, env: env(''), logFile: log });
  started.push(p.pid);
  await until(() => readFileSync(log, 'utf8').includes('ready'));
  assert.is(await killGroup(p.pid, { graceMs: 300 }), 'killed');
  assert.is((await p.exited).signal, 'SIGKILL');
});

Proc('liveness from a pid alone, as after a server restart', async () => {
  const p = await spawnAgent({ argv: [node, FAKE], cwd: tmp.dir, env: env('FAKE: sleep ms=300'), logFile: join(tmp.dir, 'l.log') });
  const startedAt = Date.now();
  assert.ok(isAlive(p.pid, startedAt));
  // A record far older than the process: the pid now belongs to someone else.
  assert.not.ok(isAlive(p.pid, startedAt - 3_600_000));
  assert.ok(await waitForExit(p.pid, { timeoutMs: 5000, pollMs: 20 }));
  assert.not.ok(isAlive(p.pid));
});

Proc('a missing binary is reported by spawnAgent', async () => {
  try {
    await spawnAgent({ argv: ['/nonexistent/agent-cli'], cwd: tmp.dir, env: env(''), logFile: join(tmp.dir, 'm.log') });
    assert.unreachable('should reject');
  } catch (err) {
    assert.match(String(err), /ENOENT/);
  }
});

Proc.run();
