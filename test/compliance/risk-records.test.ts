import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo } from '../helpers/repo.ts';
import { startServer } from '../helpers/server.ts';

const repo = makeRepo('svc-eu-ai-act-');
const record = (id: string, dir = repo.dir) => JSON.parse(readFileSync(join(dir, '.sdd', 'eu_ai_act', `${id}.json`), 'utf8'));
const committed = (id: string) => execFileSync('git', ['ls-tree', '-r', '--name-only', 'refs/sdd/state', '--', `.sdd/eu_ai_act/${id}.json`], { cwd: repo.dir, encoding: 'utf8' }).trim();

test('create, batch create and self-create each write the EU AI Act record, committed with the task; a start backfills a missing one', async () => {
  let server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  try {
    const one = await server.api('POST', '/tasks', { title: 'Add login throttling', role: 'backend' });
    assert.is(one.status, 201, JSON.stringify(one.body));
    const batch = await server.api('POST', '/tasks/batch', { tasks: [{ title: 'Fix typo in docs' }, { title: 'Refund flow', description: 'invoice refunds' }] });
    assert.is(batch.status, 201, JSON.stringify(batch.body));
    const sub = await server.api('POST', '/tasks/self-create', { parent_task_id: one.body.id, title: 'Cache warm-up' });
    assert.is(sub.status, 201, JSON.stringify(sub.body));
    await server.settled();
    const ids = [one.body.id, ...batch.body.created.map((t: { id: string }) => t.id), sub.body.id];
    assert.equal(ids.map((id) => record(id).risk_level), ['high', 'minimal', 'high', 'limited']);
    assert.is(record(one.body.id).assessed_at, one.body.created_at);
    for (const id of ids) assert.is(committed(id), `.sdd/eu_ai_act/${id}.json`, `${id} in refs/sdd/state`);
    // A task whose record is missing (a board from before records existed) gets it at the next start.
    await server.stop();
    rmSync(join(repo.dir, '.sdd', 'eu_ai_act', `${sub.body.id}.json`));
    server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
    await server.settled();
    assert.ok(existsSync(join(repo.dir, '.sdd', 'eu_ai_act', `${sub.body.id}.json`)));
    assert.is(record(sub.body.id).risk_level, 'limited');
  } finally {
    await server.stop();
  }
});

// A large board after a clean stop (SVC_TEST_LARGE_BOARD stands for 20,000 tasks): the EU AI Act folder is compared
// after the server listens. A record deleted by hand comes back from the ref, one edited is committed, a task whose
// record was never committed gets one from the backfill, and the next clean stop is clean again.
test('after a clean stop of a large board, the EU AI Act folder is compared just after the start: restored, committed, backfilled', async () => {
  const big = makeRepo('svc-eu-ai-act-large-');
  const env = { SVC_TEST_LARGE_BOARD: '1' };
  const file = (id: string) => join(big.dir, '.sdd', 'eu_ai_act', `${id}.json`);
  const inRef = (id: string) => execFileSync('git', ['show', `refs/sdd/state:.sdd/eu_ai_act/${id}.json`], { cwd: big.dir, encoding: 'utf8' });
  let server = await startServer(big.dir, { args: ['--no-orchestrator'], env });
  try {
    const ids: string[] = [];
    for (const title of ['Refund flow', 'Fix typo in docs', 'Cache warm-up']) ids.push((await server.api('POST', '/tasks', { title })).body.id);
    await server.settled();
    assert.is(await server.stop(), 0);
    const [a, b, c] = ids as [string, string, string];
    const committedB = readFileSync(file(b), 'utf8');
    rmSync(file(a));
    writeFileSync(file(b), committedB.replace('"minimal"', '"limited"'));
    // c's record is gone from the disk and from the ref (as for a board from before records existed).
    rmSync(file(c));
    execFileSync('git', ['update-ref', 'refs/sdd/state', execFileSync('git', ['commit-tree', '-p', 'refs/sdd/state', '-m', 'drop a record',
      execFileSync('git', ['mktree'], { cwd: big.dir, input: treeWithout(big.dir, c), encoding: 'utf8' }).trim()], { cwd: big.dir, encoding: 'utf8' }).trim()], { cwd: big.dir });
    // ...and that head is the one the clean stop names.
    writeFileSync(join(big.dir, '.sdd', 'runtime', 'state-clean.json'), JSON.stringify({ head: execFileSync('git', ['rev-parse', 'refs/sdd/state'], { cwd: big.dir, encoding: 'utf8' }).trim() }) + '\n');
    server = await startServer(big.dir, { args: ['--no-orchestrator'], env });
    const until = Date.now() + 20_000;
    while (!/compared after the start/.test(server.output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.match(server.output(), /eu_ai_act\/ compared after the start: 1 changed file\(s\) to commit, 1 restored/);
    while (!/wrote the EU AI Act record of 1 task/.test(server.output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await server.settled();
    assert.ok(existsSync(file(a)), 'restored from the ref');
    assert.is(record(a, big.dir).risk_level, 'high');
    assert.is(inRef(b), readFileSync(file(b), 'utf8'), 'the hand edit is committed');
    assert.is(record(c, big.dir).risk_level, 'limited', 'backfilled');
    assert.is(inRef(c), readFileSync(file(c), 'utf8'));
    assert.is(await server.stop(), 0);
    assert.ok(existsSync(join(big.dir, '.sdd', 'runtime', 'state-clean.json')), 'a clean stop');
  } finally {
    await server.stop();
    big.cleanup();
  }
});

// The ref's .sdd tree (as `git mktree` input) without c's EU AI Act record: the root tree rebuilt with a new .sdd.
function treeWithout(dir: string, id: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  const eu = git('ls-tree', 'refs/sdd/state:.sdd/eu_ai_act').split('\n').filter((l) => l && !l.endsWith(`\t${id}.json`)).join('\n') + '\n';
  const euTree = execFileSync('git', ['mktree'], { cwd: dir, input: eu, encoding: 'utf8' }).trim();
  const sdd = git('ls-tree', 'refs/sdd/state:.sdd').split('\n').filter(Boolean).map((l) => (l.endsWith('\teu_ai_act') ? `040000 tree ${euTree}\teu_ai_act` : l)).join('\n') + '\n';
  const sddTree = execFileSync('git', ['mktree'], { cwd: dir, input: sdd, encoding: 'utf8' }).trim();
  return git('ls-tree', 'refs/sdd/state').split('\n').filter(Boolean).map((l) => (l.endsWith('\t.sdd') ? `040000 tree ${sddTree}\t.sdd` : l)).join('\n') + '\n';
}

test.after(() => repo.cleanup());
test.run();
