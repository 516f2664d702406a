import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/server.ts';
import { boot, type Api } from './support.ts';

// Every change reaches refs/sdd/state and the HMAC-chained audit log.
let a: Api;
const T = suite('state ref and audit log');
T.before(async () => { a = await boot(); });
T.after(async () => { await a?.close(); });
// Until every acknowledged write is on its file and in refs/sdd/state (polled), not a guessed sleep.
const flush = () => a.s.settled();

T('every change lands in refs/sdd/state with a message naming the verbs and ids', async () => {
  const t = await a.create({ title: 'tracked in git' });
  await a.s.api('POST', `/tasks/${t.id}/claim?claimed_by_session=backend-3f2a`);
  await a.verb(t.id, 'progress', { message: 'working', files_changed: 1 });
  await a.verb(t.id, 'complete', { result_summary: 'shipped' });
  const other = await a.create();
  await a.verb(other.id, 'block', { reason: 'waiting' });
  await a.verb(other.id, 'cancel', {});
  await a.s.api('PATCH', `/tasks/${other.id}`, { priority: 9 });
  await flush();
  const log = a.repo.git('log', 'refs/sdd/state', '--format=%B');
  const named = (verb: string, task: { id: string; title: string }) => `${verb} "${task.title}" (${task.id})`;
  for (const note of [named('create', t), `${named('claim', t)} by backend-3f2a`, named('complete', t), named('create', other), named('block', other), named('cancel', other), named('patch', other)]) {
    assert.ok(log.includes(note), `log names "${note}":\n${log}`);
  }
  assert.ok(log.includes('Svc-Actor: env'), `the actor is a trailer:\n${log}`);
  const shard = t.id.slice(-2);
  const files = a.repo.git('ls-tree', '-r', '--name-only', 'refs/sdd/state');
  assert.ok(files.split('\n').some((f) => f.endsWith(`tasks/${shard}/${t.id}.json`)), files);
  const path = files.split('\n').find((f) => f.endsWith(`tasks/${shard}/${t.id}.json`))!;
  const committed = JSON.parse(a.repo.git('show', `refs/sdd/state:${path}`));
  assert.is(committed.status, 'done');
  assert.is(committed.result_summary, 'shipped');
  assert.ok(!files.includes('runtime/') && !files.includes('secrets/'), 'runtime and secrets are never committed');
  assert.is(a.repo.git('status', '--porcelain'), '', 'the user\'s work tree is untouched');
  assert.is(a.repo.git('log', '--format=%s', 'main'), 'initial', 'main is untouched');
});

T('a restarted server serves the same board: claims, queue order and dependencies survive', async () => {
  const held = await a.claimed({ role: 'restart' }, 'before-restart');
  const dep = await a.create({ role: 'restart-dep' });
  const low = await a.create({ role: 'restart', priority: 9 });
  const high = await a.create({ role: 'restart', priority: 1 });
  const waiting = await a.create({ role: 'restart', priority: 0, depends_on: [dep.id] });
  const before = (await a.s.api('GET', '/tasks/counts')).body;
  await a.restart();
  assert.equal((await a.s.api('GET', '/tasks/counts')).body, before);
  const h = await a.get(held.id);
  assert.is(h.status, 'claimed');
  assert.is(h.claimed_by_session, 'before-restart');
  assert.is((await a.s.api('GET', '/tasks/next/restart')).body.id, high.id);
  assert.is((await a.s.api('GET', '/tasks/next/restart')).body.id, low.id);
  assert.is((await a.s.api('GET', '/tasks/next/restart')).status, 404, 'the dependent still waits');
  await a.s.api('POST', `/tasks/${dep.id}/claim`);
  await a.verb(dep.id, 'complete', { result_summary: 'after restart' });
  assert.is((await a.s.api('GET', '/tasks/next/restart')).body.id, waiting.id);
  await flush();
  assert.match(a.repo.git('log', 'refs/sdd/state', '--format=%s'), `complete "${dep.title}" (${dep.id})`);
});

T('transitions appear in .sdd/audit/<date>.jsonl; svc audit verify passes, then names the tampered line', async () => {
  const t = await a.claimed({}, 'aud-1');
  await a.verb(t.id, 'fail', { reason: 'audited failure' });
  await flush();
  const dir = join(a.repo.dir, '.sdd', 'audit');
  const seg = readdirSync(dir).filter((f) => /^\d{4}-\d\d-\d\d\.jsonl$/.test(f)).sort().pop()!;
  assert.ok(seg, 'a dated segment exists');
  const lines = readFileSync(join(dir, seg), 'utf8').trim().split('\n');
  const recs = lines.map((l) => JSON.parse(l));
  const mine = recs.filter((r) => r.resource_id === t.id);
  assert.equal(mine.map((r) => r.action), ['task.create', 'task.claim', 'task.fail']);
  assert.equal(mine[2].details, { from: 'claimed', to: 'failed', version: 3 }, 'details name the states and the version the change made');
  assert.equal(mine.map((r) => r.details.version), [1, 2, 3]);
  for (const k of ['seq', 'ts', 'actor', 'action', 'resource_type', 'resource_id', 'details', 'prev', 'hmac']) assert.ok(k in mine[0], k);
  assert.is(mine[0].actor, 'env');

  const ok = await runCli(['audit', 'verify'], { cwd: a.repo.dir });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /audit chain ok/);

  const idx = recs.findIndex((r) => r.resource_id === t.id && r.action === 'task.fail');
  const forged = { ...recs[idx], details: { ...recs[idx].details, to: 'done' } };
  lines[idx] = JSON.stringify(forged);
  writeFileSync(join(dir, seg), lines.join('\n') + '\n');
  const bad = await runCli(['audit', 'verify'], { cwd: a.repo.dir });
  assert.is(bad.code, 1, bad.stdout + bad.stderr);
  assert.match(bad.stdout + bad.stderr, new RegExp(`${seg} line ${idx + 1}\\b`));
});

T.run();
