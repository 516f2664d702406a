// One server and three `svc worker` processes on loopback, each in its own clone (no shared directory):
// the fake agent's work reaches the server's base branch; workers survive a server restart (outbox) and
// a SIGKILL of their own (sessions found and reported at restart); usage and setup errors come first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';
import { cloneForWorker, startWorker, type RunningWorker } from '../helpers/worker.ts';
import { SECRET } from '../cluster/support.ts';
import { fake } from './fake-config.ts';

const T = suite('e2e: workers');
let repo: TempRepo;
let tmp: { dir: string; cleanup(): void };
let s: RunningServer | undefined;
const workers: RunningWorker[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FAST = ['--poll-interval-ms', '150', '--heartbeat-interval-ms', '300', '--grace-period', '20'];
// The run is 30 tasks (RELIABILITY_LONG=1, about 2 minutes on 2 busy cores); 9 keep the suite's budget.
const TASKS = process.env.RELIABILITY_LONG ? 30 : 9;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 90_000): Promise<T> {
  for (const end = Date.now() + ms; ;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n--- server\n${s?.output().slice(-2500)}\n--- workers\n${workers.map((w) => w.output().slice(-1500)).join('\n---\n')}`);
    await sleep(150);
  }
}
const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await s!.api('GET', `/tasks/${id}`)).body));
const worker = (name: string, slots = 2) => {
  const dir = join(tmp.dir, name);
  cloneForWorker(s!.url, SECRET, dir);
  const w = startWorker(dir, ['--server', s!.url, '--token', SECRET, '--name', name, '--slots', String(slots), '--roles', 'backend', ...FAST]);
  workers.push(w);
  return w;
};
const boot = async (port = 0) => {
  s = await startServer(repo.dir, { env: { SERVICE_CLUSTER_SECRET: SECRET }, args: port ? ['--port', String(port)] : [] });
};

T.before.each(async () => {
  repo = makeRepo('svc-workers-');
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  // The server runs no agent of its own: every task goes to a worker; it gates and merges.
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), 'orchestrator:\n  tick_ms: 150\n  max_agents: 0\ncluster:\n  node_timeout_s: 2\n  staleness_check_s: 1\n');
  tmp = makeTempDir('svc-workers-clones-');
  await boot();
});
T.after.each(async () => {
  for (const w of workers.splice(0)) if (w.child.exitCode === null) await w.stop('SIGKILL');
  await s?.stop();
  repo.cleanup();
  tmp.cleanup();
});

T('usage errors exit 2; a workspace that is not a repository with a commit exits 1 naming it, before registering', async () => {
  const dir = join(tmp.dir, 'not-a-repo');
  mkdirSync(dir);
  const usage = await runCli(['worker', '--server', s!.url, '--token', SECRET, '--slots', 'many'], { cwd: dir });
  assert.is(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, '--slots expects a whole number');
  assert.is((await runCli(['worker', '--token', SECRET], { cwd: dir })).code, 2, 'no server');
  const setup = await runCli(['worker', '--server', s!.url, '--token', SECRET], { cwd: dir });
  assert.is(setup.code, 1);
  assert.match(setup.stderr, `${dir} is not a git work tree`);
  execFileSync('git', ['init', '-q', dir]);
  const empty = await runCli(['worker', '--server', s!.url, '--token', SECRET], { cwd: dir });
  assert.is(empty.code, 1);
  assert.match(empty.stderr, 'has no commit yet');
  assert.equal((await s!.api('GET', '/cluster/nodes')).body, [], 'nothing registered');
});

T(`${TASKS} tasks through 3 workers: all closed, every agent commit merged, the node of each claim in refs/sdd/state; SIGTERM unregisters`, async () => {
  const nodes = [worker('w1'), worker('w2'), worker('w3')];
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) ids.push((await s!.api('POST', '/tasks', { title: `task ${i}`, role: 'backend' })).body.id);
  const done = await until('all closed', async () => {
    const ts = await statuses(ids);
    return ts.every((t) => t.status === 'closed') && ts;
  }, 240_000);
  const registry = (await s!.api('GET', '/cluster/nodes')).body as { id: string; name: string }[];
  assert.equal(registry.map((n) => n.name).sort(), ['w1', 'w2', 'w3']);
  const nodeIds = new Set(registry.map((n) => n.id));
  for (const t of done) {
    assert.ok(nodeIds.has(t.node_id), `task ${t.id} claimed by a node`);
    assert.is(repo.git('show', `main:${t.id}.txt`).length > 0, true, `work of ${t.id} merged`);
  }
  assert.ok(new Set(done.map((t) => t.node_id)).size >= 2, 'the work is spread over the workers');
  await s!.settled();
  const inState = repo.git('grep', '-h', '-o', '"node_id": "[0-9a-f]*"', 'refs/sdd/state', '--', '.sdd/tasks').split('\n').filter(Boolean);
  assert.ok(inState.length >= TASKS, `node ids recorded in refs/sdd/state (${inState.length})`);
  for (const w of nodes) assert.is(await w.stop('SIGTERM'), 0, w.output().slice(-1000));
  assert.equal((await s!.api('GET', '/cluster/nodes')).body, [], 'each worker unregistered');
  for (const w of nodes) assert.match(w.output(), 'worker stopped');
});

T('a server restart mid-run: agents keep running, reports wait in the outbox and reach the new server', async () => {
  const w = worker('w1', 3);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await s!.api('POST', '/tasks', { title: `slow ${i}`, role: 'backend', description: fake(`edit file=slow-${i}.txt content=${i}`, 'commit', 'sleep ms=2500', 'complete') })).body.id);
  await until('all running', async () => (await statuses(ids)).every((t) => t.status === 'in_progress'));
  const port = s!.port;
  await s!.kill();
  await until('a report kept in the outbox', async () => /kept in the outbox/.test(w.output()));
  await boot(port);
  await until('all closed after the restart', async () => (await statuses(ids)).every((t) => t.status === 'closed'));
  for (let i = 0; i < 3; i++) assert.is(repo.git('show', `main:slow-${i}.txt`), String(i));
});

T('SIGKILL of a worker: offline after node_timeout_s, its tasks stay its own, and the restarted worker adopts its agents and reports them', async () => {
  const w = worker('w1', 2);
  // The agents report only once the restarted worker is up (they outlive the killed one; its relay keeps its port).
  const gate = join(tmp.dir, 'report-now');
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) ids.push((await s!.api('POST', '/tasks', { title: `killed ${i}`, role: 'backend', description: fake(`edit file=k-${i}.txt content=${i}`, 'commit', 'log text=committed', `sh cmd=while [ ! -f ${gate} ]; do sleep 0.1; done`, 'complete') })).body.id);
  await until('both agents committed', async () => (w.output().match(/agent started/g) ?? []).length === 2 && (await statuses(ids)).every((t) => t.status === 'in_progress'));
  await sleep(300);
  await w.stop('SIGKILL');
  const held = await statuses(ids);
  for (const t of held) assert.ok(t.status === 'in_progress' || t.status === 'done', t.status);
  await until('the node marked offline (node_timeout_s 2)', async () => ((await s!.api('GET', '/cluster/nodes')).body as { status: string }[])[0]?.status === 'OFFLINE');
  for (const t of await statuses(ids)) assert.ok(t.node_id && (t.status === 'in_progress' || t.status === 'done'), 'its tasks stay with it');
  const again = startWorker(w.dir, ['--server', s!.url, '--token', SECRET, '--name', 'w1', '--slots', '2', '--roles', 'backend', ...FAST]);
  workers.push(again);
  await until('both agents adopted', async () => (again.output().match(/adopted session/g) ?? []).length === 2);
  writeFileSync(gate, '');
  await until('both closed', async () => (await statuses(ids)).every((t) => t.status === 'closed'));
  for (let i = 0; i < 2; i++) assert.is(repo.git('show', `main:k-${i}.txt`), String(i));
  for (const t of await statuses(ids)) assert.is(t.claim_count, 1, 'the first agent\'s own work, adopted and reported: nothing redone');
  assert.equal(((await s!.api('GET', '/cluster/nodes')).body as unknown[]).length, 1, 'the same node, not a second one');
});

T.run();
