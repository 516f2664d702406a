// Disk trouble: a real `svc up` whose store writes fail with ENOSPC (the SVC_TEST_FAULT_FILE hook of
// src/cli/runtime.ts). Writes answer 503 with a clear detail, reads work, nothing half-written survives.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { leftoverTemps, liftQuota, readTaskFiles, report, rounds, seeded } from './lib.ts';

const test = suite('disk');
let repo: TempRepo;
let s: RunningServer;
let fault: string;
const stats = { requests: 0, refused_503: 0, five_xx_other: 0, batches_503: 0, half_batches: 0 };

const full = (p = '') => writeFileSync(fault, p);
const clear = () => rmSync(fault, { force: true });
const start = () => startServer(repo.dir, { args: ['--no-orchestrator'], env: { SVC_TEST_FAULT_FILE: fault } });

test.before(async () => {
  repo = makeRepo('svc-disk-');
  liftQuota(repo.dir);
  fault = join(repo.dir, '.sdd', 'runtime', 'test-fault-enospc');
  s = await start();
});
test.after(async () => {
  clear();
  await s.kill();
  repo.cleanup();
});

test('a full disk answers every write with 503 naming ENOSPC, reads still work, writes resume after', async () => {
  const open = (await s.api('POST', '/tasks', { title: 'before the disk filled', role: 'disk' })).body;
  const busy = (await s.api('POST', '/tasks', { title: 'claimed before the disk filled', role: 'disk' })).body;
  await s.api('POST', `/tasks/${busy.id}/claim`);
  await s.settled();
  const before = readTaskFiles(repo.dir).tasks;
  full();
  const writes: [string, string, unknown?][] = [
    ['POST', '/tasks', { title: 'while full' }],
    ['POST', '/tasks/batch', { tasks: [{ title: 'batch while full 1' }, { title: 'batch while full 2' }] }],
    ['GET', '/tasks/next/disk'],
    ['POST', `/tasks/${open.id}/claim`],
    ['POST', '/tasks/claim-batch', { task_ids: [open.id] }],
    ['POST', `/tasks/${busy.id}/progress`, { message: 'while full', files_changed: 1 }],
    ['POST', `/tasks/${busy.id}/complete`, { result_summary: 'while full' }],
    ['POST', `/tasks/${busy.id}/fail`, { reason: 'while full' }],
    ['POST', `/tasks/${busy.id}/release`, {}],
    ['PATCH', `/tasks/${open.id}`, { priority: 1 }],
  ];
  for (const [method, path, body] of writes) {
    const r = await s.api(method, path, body);
    assert.is(r.status, 503, `${method} ${path} refused while full: ${r.status} ${JSON.stringify(r.body)}`);
    assert.match(r.body.detail, /ENOSPC/, `${method} ${path}: the detail names the trouble`);
  }
  for (const path of [`/tasks/${open.id}`, '/tasks?limit=10', '/tasks/counts', '/tasks/search', `/tasks/${busy.id}/progress`, '/health']) {
    assert.is((await s.api('GET', path)).status, 200, `GET ${path} works while full`);
  }
  assert.equal(leftoverTemps(repo.dir), [], 'no temp file left');
  const during = readTaskFiles(repo.dir);
  assert.equal(during.broken, []);
  assert.is(during.tasks.size, before.size, 'no task created while full');
  for (const [id, t] of before) assert.is(during.tasks.get(id).version, t.version, `${id} unchanged while full`);
  clear();
  assert.is((await s.api('POST', '/tasks', { title: 'after the disk cleared', role: 'disk' })).status, 201);
  assert.is((await s.api('POST', `/tasks/${busy.id}/complete`, { result_summary: 'after' })).status, 200);
  assert.is((await s.api('GET', '/tasks/next/disk')).status, 200);
});

test('intermittent write failures leave no half-written task, batch or answer', async () => {
  const rnd = seeded();
  const batches: { titles: string[]; status: number }[] = [];
  const acked = new Map<string, number>();
  full('0.3');
  const ops = rounds(150, 1500);
  for (let i = 0; i < ops; i++) {
    const known = [...acked.keys()];
    const roll = rnd.next();
    let r;
    if (roll < 0.25) r = await s.api('POST', '/tasks', { title: `flaky ${i}`, role: 'flaky' });
    else if (roll < 0.4) {
      const titles = [`flaky batch ${i}.a`, `flaky batch ${i}.b`, `flaky batch ${i}.c`];
      r = await s.api('POST', '/tasks/batch', { tasks: titles.map((title) => ({ title, role: 'flaky' })) });
      batches.push({ titles, status: r.status });
      if (r.status === 503) stats.batches_503++;
    } else if (roll < 0.55) r = await s.api('GET', '/tasks/next/flaky?claimed_by_session=flaky');
    else if (!known.length) continue;
    else {
      const id = rnd.pick(known);
      const verb = rnd.pick(['progress', 'complete', 'fail', 'release', 'claim']);
      r = await s.api('POST', `/tasks/${id}/${verb}`, verb === 'complete' ? { result_summary: 'flaky' } : verb === 'progress' ? { message: 'flaky', files_changed: i } : {});
    }
    stats.requests++;
    if (r.status === 503) stats.refused_503++;
    else if (r.status >= 500) stats.five_xx_other++;
    assert.ok(r.status < 500 || (r.status === 503 && /ENOSPC/.test(r.body.detail)), `op ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    for (const t of r.status < 300 ? [r.body, ...(r.body.created ?? []), ...(r.body.claimed ?? [])] : []) if (t?.id) acked.set(t.id, Math.max(acked.get(t.id) ?? 0, t.version));
  }
  clear();
  await s.settled(); // files refused by the disk are retried from memory (the journal holds them)
  await checkWhole(acked, batches, 'after the trouble');
  await s.stop();
  s = await start();
  await checkWhole(acked, batches, 'after a restart');
  report('disk', stats);
});

test('claim-batch on a flaky disk: 200 claims every task, 503 leaves every one open', async () => {
  const rnd = seeded();
  let answered503 = 0;
  let answered200 = 0;
  for (let round = 0; round < rounds(12, 60); round++) {
    const made = await s.api('POST', '/tasks/batch', { tasks: [0, 1, 2, 3].map((k) => ({ title: `cb ${round}.${k}`, role: 'cb' })) });
    assert.is(made.status, 201);
    const ids = made.body.created.map((t: { id: string }) => t.id);
    full(String(0.15 + rnd.next() * 0.15));
    const r = await s.api('POST', '/tasks/claim-batch', { task_ids: ids, claimed_by_session: `cb-${round}` });
    clear();
    const states = await Promise.all(ids.map(async (id: string) => (await s.api('GET', `/tasks/${id}`)).body.status));
    if (r.status === 200) {
      answered200++;
      assert.is(r.body.claimed.length, 4, `round ${round}: 200 claims all four: ${JSON.stringify(r.body)}`);
      assert.equal(states, ['claimed', 'claimed', 'claimed', 'claimed']);
    } else {
      answered503++;
      assert.is(r.status, 503, `round ${round}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.match(r.body.detail, /ENOSPC/);
      assert.equal(states, ['open', 'open', 'open', 'open'], `round ${round}: a refused batch leaves none claimed`);
    }
  }
  assert.ok(answered503 > 0, `some batches met the fault (${answered200} went through)`);
});

// Files parse, no temp is left, the server serves exactly the files, acknowledged versions hold, batches are all or nothing.
async function checkWhole(acked: Map<string, number>, batches: { titles: string[]; status: number }[], where: string): Promise<void> {
  assert.equal(leftoverTemps(repo.dir).filter((p) => !p.startsWith('runtime/batches/')), [], `${where}: no temp file left`);
  const { tasks, broken } = readTaskFiles(repo.dir);
  assert.equal(broken, [], `${where}: every task file parses`);
  for (const [id, v] of acked) assert.ok((tasks.get(id)?.version ?? -1) >= v, `${where}: acknowledged ${id} v${v} on disk`);
  for (const [id, t] of tasks) {
    const r = await s.api('GET', `/tasks/${id}`);
    assert.ok(r.status === 200 && r.body.version === t.version && r.body.status === t.status, `${where}: ${id} (${t.title}) served as on disk: ${r.status} v${r.body.version} ${r.body.status} vs v${t.version} ${t.status}`);
  }
  const titles = new Set([...tasks.values()].map((t) => t.title));
  for (const b of batches) {
    const present = b.titles.filter((x) => titles.has(x)).length;
    if (present !== 0 && present !== b.titles.length) stats.half_batches++;
    assert.ok(present === 0 || present === b.titles.length, `${where}: batch ${b.titles[0]} (answered ${b.status}) is all or nothing: ${present}/3`);
    if (b.status === 201) assert.is(present, 3, `${where}: an acknowledged batch is whole`);
  }
}

test.run();
