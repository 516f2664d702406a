// A bulk import through a real server: thousands of tasks in batches put thousands of EU AI Act records into
// one flat folder in one state commit, whose tree the state writer builds itself (store/big-folder.ts, a
// loose object) instead of git fast-import's linear insert. Every acknowledged task and record reaches
// refs/sdd/state, git finds the repository sound, and a SIGKILL in the middle of it loses nothing.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const T = suite('state: a bulk import into one folder');
let repo: TempRepo;
let server: RunningServer | undefined;
T.before.each(() => {
  repo = makeRepo('svc-bulk-import-');
  // A board past the default tenant's 1,000 tasks.
  mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), 'tenants:\n  default_max_tasks: 100000\n');
});
T.after.each(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) await server.kill();
  server = undefined;
  repo.cleanup();
});

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo.dir, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
const inRef = (folder: string) => new Set(git('ls-tree', '-r', '--name-only', 'refs/sdd/state', '--', `.sdd/${folder}`).split('\n').filter(Boolean).map((p) => p.split('/').pop()!.replace(/\.json$/, '')));
const batch = (n: number, from: number) => ({ tasks: Array.from({ length: n }, (_, i) => ({ title: `imported ticket ${from + i}`, role: 'backend' })) });
// Send `batches` of 1,000 at once; the ids the server acknowledged (201).
async function importTasks(s: RunningServer, batches: number): Promise<string[]> {
  const answers = await Promise.all(Array.from({ length: batches }, (_, b) => s.api('POST', '/tasks/batch', batch(1000, b * 1000)).catch(() => null)));
  return answers.flatMap((r) => (r?.status === 201 ? (r.body.created as { id: string }[]).map((t) => t.id) : []));
}

T('2,000 tasks in two batches: every task and its record in refs/sdd/state, the records\' folder a tree svc wrote, git fsck clean', async () => {
  server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  const ids = await importTasks(server, 2);
  assert.is(ids.length, 2000);
  await server.settled();
  const records = inRef('eu_ai_act');
  const tasks = new Set([...inRef('tasks')].filter((n) => n !== '.keep'));
  assert.ok(ids.every((id) => records.has(id) && tasks.has(id)), `${ids.filter((id) => !records.has(id)).length} record(s) and ${ids.filter((id) => !tasks.has(id)).length} task(s) missing from the ref`);
  // Built by svc: a loose object (fast-import writes its trees into its packs).
  const tree = git('rev-parse', 'refs/sdd/state:.sdd/eu_ai_act');
  const loose = join(repo.dir, '.git', 'objects', tree.slice(0, 2), tree.slice(2));
  assert.ok(existsSync(loose), 'the records\' tree written by svc');
  assert.is(git('fsck', '--strict', '--no-dangling', '--no-progress'), '');
  assert.is(await server.stop(), 0);
});

T('SIGKILL while 2,000 tasks are imported: after a restart every acknowledged task and record is in the ref, git fsck clean', async () => {
  server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  const ids = await importTasks(server, 2);
  assert.is(ids.length, 2000, 'all acknowledged before the kill');
  await server.kill(); // the commit of the import is under way or not begun: either way nothing acknowledged is lost
  server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  await server.settled();
  const records = inRef('eu_ai_act');
  const tasks = inRef('tasks');
  assert.is(ids.filter((id) => !records.has(id) || !tasks.has(id)).length, 0, 'every acknowledged task and record in the ref');
  assert.is((await server.api('GET', '/tasks?limit=1')).body.total, 2000);
  assert.is(git('fsck', '--strict', '--no-dangling', '--no-progress'), '');
  assert.is(await server.stop(), 0);
});

T.run();
