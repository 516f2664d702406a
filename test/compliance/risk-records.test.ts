import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo } from '../helpers/repo.ts';
import { startServer } from '../helpers/server.ts';

const repo = makeRepo('svc-eu-ai-act-');
const record = (id: string) => JSON.parse(readFileSync(join(repo.dir, '.sdd', 'eu_ai_act', `${id}.json`), 'utf8'));
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

test.after(() => repo.cleanup());
test.run();
