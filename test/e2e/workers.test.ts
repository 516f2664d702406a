// One server and three `svc worker` processes on loopback, each in its own clone (no shared directory):
// the fake agent's work reaches the server's base branch; workers survive a server restart (outbox) and
// a SIGKILL of their own (sessions found and reported at restart); usage and setup errors come first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';
import { cloneForWorker, startWorker, type RunningWorker } from '../helpers/worker.ts';
import { SECRET } from '../cluster/support.ts';
import { fake } from './fake-config.ts';
import { claimingRecord } from '../../src/worker/index.ts';

const T = suite('e2e: workers');
let repo: TempRepo;
let tmp: { dir: string; cleanup(): void };
let s: RunningServer | undefined;
const workers: RunningWorker[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FAST = ['--poll-interval-ms', '150', '--heartbeat-interval-ms', '300', '--grace-period', '20'];
// The 30 tasks: 18–44 s for that test on 2 cores at load average 4–8 (median ~30 s, against ~23 s for 9).
const TASKS = 30;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 90_000): Promise<T> {
  for (const end = Date.now() + ms; ;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n--- server\n${s?.output().slice(-2500)}\n--- workers\n${workers.map((w) => w.output().slice(-1500)).join('\n---\n')}`);
    await sleep(150);
  }
}
// One list request per look (a poll every 150 ms of one GET per task was ~200 requests/s against the server).
const statuses = async (ids: string[]) => {
  const tasks = (await s!.api('GET', '/tasks?limit=500')).body.tasks;
  return ids.map((id) => tasks.find((t: { id: string }) => t.id === id));
};
// Requests the server answered on one route with one status (its /metrics).
const answered = async (method: string, route: string, status: number) => {
  const text = String((await s!.api('GET', '/metrics')).body);
  const line = text.split('\n').find((l) => l.startsWith(`http_requests_total{method="${method}",route="${route}",status="${status}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};
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

T(`${TASKS} tasks through 3 workers: all closed, every agent commit merged, the node of each claim in refs/sdd/state, one request per cycle; SIGTERM unregisters`, async () => {
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) ids.push((await s!.api('POST', '/tasks', { title: `task ${i}`, role: 'backend' })).body.id);
  const nodes = [worker('w1'), worker('w2'), worker('w3')];
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
  // Each of the 6 slots claims once with GET /tasks/next; every later task comes with the complete of the one
  // before. A report that had to wait in the outbox (a push the loaded server failed) is sent plainly, and an
  // agent that could not start gives its task back: their slots claim again.
  assert.is(await answered('POST', '/tasks/:task_id/complete', 200), TASKS);
  const claims = await answered('GET', '/tasks/next/:role', 200);
  const again = nodes.flatMap((w) => w.output().split('\n').filter((l) => /kept in the outbox|could not be started/.test(l)));
  assert.ok(claims <= 6 + again.length, `${claims} claims by GET /tasks/next for ${TASKS} tasks on 6 slots:\n${again.join('\n')}\n${nodes.map((w) => w.output().slice(-3000)).join('\n---\n')}`);
  // The state commits follow the changes (seconds behind on a loaded machine, while the server keeps retiring sessions).
  const inState = () => repo.git('grep', '-h', '-o', '"node_id": "[0-9a-f]*"', 'refs/sdd/state', '--', '.sdd/tasks').split('\n').filter(Boolean);
  for (const end = Date.now() + 60_000; inState().length < TASKS && Date.now() < end;) await sleep(250);
  assert.ok(inState().length >= TASKS, `node ids recorded in refs/sdd/state (${inState().length})`);
  // Each worker's clone mirrors the board; while the board does not move, no worker fetches it (the heartbeat
  // names the state commit): a window of 4 s (two mirror periods, a dozen heartbeats) with the same head.
  const head = () => repo.git('rev-parse', 'refs/sdd/state');
  const mirrorOf = (name: string) => execFileSync('git', ['-C', join(tmp.dir, name), 'rev-parse', '-q', '--verify', 'refs/sdd/state'], { encoding: 'utf8' }).trim();
  const idle = await until('a 4 s window of an unchanged board, every clone holding it', async () => {
    const h = head();
    if (!['w1', 'w2', 'w3'].every((n) => mirrorOf(n) === h)) return false;
    const fetches = await answered('GET', '/state.git/info/refs', 200);
    await sleep(4000);
    return head() === h && { fetches, after: await answered('GET', '/state.git/info/refs', 200) };
  });
  assert.ok(idle.fetches > 0, 'the workers mirrored the board');
  assert.is(idle.after, idle.fetches, 'an idle board: no worker fetched it');
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

T('a long poll claims at once and SIGTERM cuts it short; a kill on the server stops the agent on the worker; a claim saved before a crash is run at restart', async () => {
  // A poll interval of 20 s: claims that come sooner came from the long poll, a stop that comes sooner aborted it.
  const slow = ['--server', s!.url, '--token', SECRET, '--name', 'w1', '--slots', '2', '--roles', 'backend', '--poll-interval', '20', '--heartbeat-interval-ms', '300', '--grace-period', '20'];
  const dir = join(tmp.dir, 'w1');
  cloneForWorker(s!.url, SECRET, dir);
  const w = startWorker(dir, slow);
  workers.push(w);
  await until('registered', async () => ((await s!.api('GET', '/cluster/nodes')).body as unknown[]).length === 1);
  await sleep(500);
  const hang = (await s!.api('POST', '/tasks', { title: 'hangs', role: 'backend', description: fake('sleep ms=120000') })).body.id as string;
  const running = await until('claimed by the waiting long poll and started', async () => {
    const t = (await statuses([hang]))[0];
    return t.status === 'in_progress' && /agent started/.test(w.output()) && t;
  }, 15_000);
  const sid = running.claimed_by_session as string;
  const pid = JSON.parse(readFileSync(join(dir, '.sdd', 'runtime', 'worker', 'sessions', `${sid}.json`), 'utf8')).pid as number;
  const kill = await s!.api('POST', `/agents/${sid}/kill`);
  assert.equal([kill.status, kill.body], [200, { session_id: sid, kill_requested: true }]);
  const blocked = await until('the task blocked as a local kill blocks it', async () => {
    const t = (await statuses([hang]))[0];
    return t.status === 'blocked' && t;
  }, 20_000);
  assert.match(JSON.stringify(blocked), /killed by /);
  assert.throws(() => process.kill(pid, 0), 'the agent process is gone');
  assert.match(w.output(), `session ${sid} (task ${hang}): agent killed on request of`);
  // Idle in a 20 s long poll: SIGTERM aborts it.
  const stopped = w.stop('SIGTERM');
  assert.is(await Promise.race([stopped, sleep(15_000).then(() => 'still running')]), 0, w.output().slice(-1500));
  // The crash window: a session record saved, the claim made for it, the worker killed before it ran the agent
  // (and the SIGKILL itself leaves the record of the long poll it was in).
  const killed = startWorker(dir, slow);
  workers.push(killed);
  const sessions = join(dir, '.sdd', 'runtime', 'worker', 'sessions');
  // A record is saved as `<sid>.json.tmp` renamed into place: a SIGKILL between the two leaves only the temp
  // file, which is no record (the run that saw it here waited 90 s for it to be dropped).
  const records = () => readdirSync(sessions).filter((f) => f.endsWith('.json'));
  await until('its long poll waiting, with its record saved', async () => records().length === 1);
  await killed.stop('SIGKILL');
  const node = JSON.parse(readFileSync(join(dir, '.sdd', 'runtime', 'worker', 'node.json'), 'utf8')) as { id: string; token: string };
  const task = (await s!.api('POST', '/tasks', { title: 'claimed before a crash', role: 'backend' })).body.id as string;
  const record = (sid: string) => writeFileSync(join(sessions, `${sid}.json`), JSON.stringify(claimingRecord(sid, 'backend', new Date().toISOString(), join(dir, '.sdd', 'worktrees', sid))));
  record('backend-c1a1c1a1');
  record('backend-0000dead');
  const claim = await s!.api('GET', '/tasks/next/backend?claimed_by_session=backend-c1a1c1a1', undefined, { authorization: `Bearer ${node.token}` });
  assert.equal([claim.status, claim.body.id, claim.body.node_id], [200, task, node.id]);
  const left = records();
  assert.is(left.length, 3, `the two records and the one of the long poll the SIGKILL cut: ${left.join(', ')}`);
  const again = startWorker(dir, slow);
  workers.push(again);
  await until('the claimed task run and closed', async () => (await statuses([task]))[0].status === 'closed', 60_000);
  assert.match(again.output(), `its claim of task ${task} went through`);
  await until('claims the server never made dropped', async () => records().every((f) => !left.includes(f)));
  assert.is((await statuses([task]))[0].claim_count, 1, 'run by the session that claimed it');
});

T.run();
