import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, agentEnv, buildPrompt, exitFilePath, mergeSession, planLaunch, promptPath, runGates, spawnAgent } from '../../src/agents/index.ts';
import { parseConfig } from '../../src/config/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-agent.mjs', import.meta.url));
interface Call { method: string; url: string; auth: string | undefined; body: unknown }

const F = suite('fake agent end to end');
let repo: TempRepo;
let server: Server;
let calls: Call[];
let status = 200;
let url = '';

F.before.each(async () => {
  repo = makeRepo('svc-fake-');
  writeFileSync(`${repo.dir}/.gitignore`, '.sdd/\n');
  repo.git('add', '.gitignore');
  repo.git('commit', '-q', '-m', 'ignore .sdd');
  calls = [];
  status = 200;
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      calls.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body: JSON.parse(raw || 'null') });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
F.after.each(async () => {
  await new Promise((r) => server.close(r));
  repo.cleanup();
});

// Everything the tick loop will do to start a run, with the generic adapter pointed at the fake agent.
async function run(sid: string, description: string) {
  const layout = sddLayout(repo.dir);
  const git = createGit(repo.dir);
  const task = { id: '01jtaskfake0000000000000001', title: 'fake work', description };
  const wt = await addWorktree({ git, layout }, sid, 'main');
  const prompt = buildPrompt({ task, sessionId: sid, worktree: wt.path, branch: wt.branch, baseBranch: 'main', serverUrl: url });
  const file = promptPath(layout, sid);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, prompt);
  const agents = parseConfig({ agents: { generic: { command: `'${process.execPath}' '${FAKE}' --prompt-file {prompt_file} --model {model}` } } }).agents;
  const launch = planLaunch({ adapter: 'generic', agents, taskModel: 'fake-1', values: { prompt_file: file, prompt, task_id: task.id, session_id: sid, worktree: wt.path } });
  const env = agentEnv({ base: { PATH: process.env.PATH }, serverUrl: url, taskId: task.id, sessionId: sid, token: 'task-token' });
  const keepAlive = setInterval(() => {}, 1000);
  try {
    const p = await spawnAgent({ argv: launch.argv, cwd: wt.path, env, logFile: layout.log(sid), exitFile: exitFilePath(layout, sid) });
    return { exit: await p.exited, wt, task, log: () => readFileSync(layout.log(sid), 'utf8') };
  } finally {
    clearInterval(keepAlive);
  }
}

F('without instructions it writes <task_id>.txt, commits and completes; gates and merge follow', async () => {
  const sid = 'backend-000000f1';
  const { exit, task } = await run(sid, 'Just do it.');
  assert.equal(exit, { code: 0, signal: null });
  assert.equal(calls, [{ method: 'POST', url: `/tasks/${task.id}/complete`, auth: 'Bearer task-token', body: { result_summary: 'done by fake agent' } }]);
  assert.is(repo.git('show', `agent/${sid}:${task.id}.txt`), `work of task ${task.id}`);
  const report = await runGates({ clock: manualClock() }, { cwd: `${repo.dir}/.sdd/worktrees/${sid}`, taskId: task.id, sessionId: sid, gates: [{ name: 'file', command: `test -f ${task.id}.txt`, required: true, timeout_s: 10 }] });
  assert.ok(report.overall_pass);
  assert.is((await mergeSession({ git: createGit(repo.dir) }, { sessionId: sid, base: 'main' })).status, 'merged');
  assert.is(readFileSync(`${repo.dir}/${task.id}.txt`, 'utf8'), `work of task ${task.id}\n`);
});

F('it follows FAKE: lines: edits, commits, reports progress and failure, logs', async () => {
  const sid = 'backend-000000f2';
  const { exit, task, log } = await run(sid, [
    'Please:',
    'FAKE: log lines=2 text=thinking',
    'FAKE: edit file=src/app.txt content=hello world',
    'FAKE: commit message=add app',
    'FAKE: progress message=half way percent=50 files_changed=1',
    'FAKE: fail reason=tests are red',
  ].join('\n'));
  assert.equal(exit, { code: 0, signal: null });
  assert.equal(calls.map((c) => [c.url, c.body]), [
    [`/tasks/${task.id}/progress`, { message: 'half way', percent: 50, files_changed: 1 }],
    [`/tasks/${task.id}/fail`, { reason: 'tests are red' }],
  ]);
  assert.is(repo.git('show', `agent/${sid}:src/app.txt`), 'hello world');
  assert.is(repo.git('log', '-1', '--format=%s', `agent/${sid}`), 'add app');
  assert.ok(log().includes('thinking 2'));
});

F('a crash exits with its code and reports nothing; a refused report exits 4', async () => {
  const crashed = await run('backend-000000f3', 'FAKE: crash code=3\nFAKE: complete');
  assert.is(crashed.exit.code, 3);
  assert.equal(calls, []);
  status = 409;
  const refused = await run('backend-000000f4', 'FAKE: complete summary=all good');
  assert.is(refused.exit.code, 4);
  assert.ok(refused.log().includes('409'));
});

F.run();
