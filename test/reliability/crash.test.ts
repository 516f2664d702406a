// Crash suite: a load of creates, claims, progress and completes against a real `svc up`, SIGKILLed at
// random moments; after every restart each acknowledged change must still be there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyAudit } from '../../src/observe/index.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { auditRecords, fsckErrors, gitBlobId, hashObject, leftoverTemps, liftQuota, readTaskFiles, refMismatches, report, rounds, seeded, sleep, waitFor } from './lib.ts';

const RANK: Record<string, number> = { open: 0, claimed: 1, in_progress: 2, done: 3 };
const WORKERS = 8;

/** What the clients were told: per task the highest acknowledged version, its status, and acknowledged progress. */
interface Acked { version: number; status: string; progress: string[]; createdAcked: boolean; completedAcked: boolean }

const test = suite('crash');

test('SIGKILL at random moments loses no acknowledged change', async () => {
  const repo = makeRepo('svc-crash-');
  liftQuota(repo.dir);
  const rnd = seeded();
  const total = rounds(20, 220);
  const acked = new Map<string, Acked>();
  const seen = new Map<string, number>();
  const stats = { seed: rnd.seed, rounds: 0, kills: 0, requests: 0, acknowledged: 0, checked: 0, lost: 0, restart_ms_max: 0, replayed_audit_records: 0 };
  let server: RunningServer | undefined;
  let titles = 0;
  const started = Date.now();
  try {
    for (let round = 1; round <= total; round++) {
      const t0 = Date.now();
      server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
      stats.restart_ms_max = Math.max(stats.restart_ms_max, Date.now() - t0);
      await checkRecovered(repo.dir, server, acked, seen, stats, round);
      const s = server;
      let stop = false;
      const worker = async (w: number) => {
        while (!stop) {
          const made = await oneOp(s, w, rnd, acked, () => `crash task ${++titles}`, stats).catch(() => true);
          if (made) stats.requests++;
          else await sleep(1); // nothing to act on yet
        }
      };
      const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
      await sleep(rnd.int(150, 900));
      await server.kill();
      stats.kills++;
      stop = true;
      await load;
      server = undefined;
      stats.rounds = round;
    }
    server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
    await checkRecovered(repo.dir, server, acked, seen, stats, total + 1);
    await server.stop();
    server = undefined;
    report('crash', { ...stats, tasks: acked.size, duration_s: Math.round((Date.now() - started) / 1000) });
    assert.is(stats.lost, 0);
    assert.ok(stats.kills >= Math.min(total, 20));
  } finally {
    if (server) await server.kill();
    repo.cleanup();
  }
});

// One random operation (false: nothing to act on); every 2xx answer is acknowledged (highest version wins).
async function oneOp(s: RunningServer, w: number, rnd: ReturnType<typeof seeded>, acked: Map<string, Acked>, title: () => string, stats: { acknowledged: number }): Promise<boolean> {
  const mine = (st: string[]) => [...acked.entries()].filter(([, a]) => st.includes(a.status));
  const ack = (t: any, progress?: string) => {
    stats.acknowledged++;
    const a = acked.get(t.id) ?? { version: 0, status: 'open', progress: [], createdAcked: false, completedAcked: false };
    if (t.version > a.version) { a.version = t.version; a.status = t.status; }
    if (progress) a.progress.push(progress);
    acked.set(t.id, a);
    return a;
  };
  const roll = rnd.next();
  if (roll < 0.3) {
    const r = await s.api('POST', '/tasks', { title: title(), role: 'backend' });
    if (r.status === 201) ack(r.body).createdAcked = true;
  } else if (roll < 0.45) {
    const r = await s.api('GET', `/tasks/next/backend?claimed_by_session=crash-w${w}`);
    if (r.status === 200) ack(r.body);
  } else if (roll < 0.6) {
    const open = mine(['open']);
    if (!open.length) return false;
    const [id, a] = rnd.pick(open);
    const r = await s.api('POST', `/tasks/${id}/claim?expected_version=${a.version}&claimed_by_session=crash-w${w}`);
    if (r.status === 200) ack(r.body);
  } else if (roll < 0.8) {
    const busy = mine(['claimed', 'in_progress']);
    if (!busy.length) return false;
    const [id] = rnd.pick(busy);
    const message = `progress ${id} ${rnd.int(0, 1e9)}`;
    const r = await s.api('POST', `/tasks/${id}/progress`, { message, files_changed: rnd.int(0, 20) });
    if (r.status === 200) ack(r.body, message);
  } else {
    const busy = mine(['claimed', 'in_progress']);
    if (!busy.length) return false;
    const [id] = rnd.pick(busy);
    const r = await s.api('POST', `/tasks/${id}/complete`, { result_summary: `done by crash-w${w}` });
    if (r.status === 200) ack(r.body).completedAcked = true;
  }
  return true;
}

// Every invariant after a restart; failures name the task and the round.
async function checkRecovered(repo: string, s: RunningServer, acked: Map<string, Acked>, seen: Map<string, number>, stats: { checked: number; lost: number; replayed_audit_records: number }, round: number): Promise<void> {
  const where = `round ${round}`;
  const { tasks, broken } = readTaskFiles(repo);
  assert.equal(broken, [], `${where}: every task file parses`);
  assert.equal(leftoverTemps(repo).filter((p) => !p.startsWith('runtime/')), [], `${where}: no temp files left`);
  const lost: string[] = [];
  for (const [id, a] of acked) {
    stats.checked++;
    const t = tasks.get(id);
    if (!t) { lost.push(`${id}: acknowledged (v${a.version} ${a.status}) but no file`); continue; }
    if (t.version < a.version) lost.push(`${id}: file v${t.version} < acknowledged v${a.version}`);
    else if (t.version === a.version && t.status !== a.status) lost.push(`${id}: v${t.version} is ${t.status}, acknowledged ${a.status}`);
    else if ((RANK[t.status] ?? -1) < (RANK[a.status] ?? 0)) lost.push(`${id}: ${t.status} is behind acknowledged ${a.status}`);
    if (a.progress.length) {
      const text = readFileSync(join(repo, '.sdd', 'progress', id.slice(-2), `${id}.jsonl`), 'utf8');
      for (const m of a.progress) if (!text.includes(JSON.stringify(m))) lost.push(`${id}: acknowledged progress '${m}' missing`);
    }
  }
  stats.lost += lost.length;
  assert.equal(lost, [], `${where}: acknowledged changes present`);
  for (const [id, t] of tasks) {
    assert.ok(t.version >= (seen.get(id) ?? 0), `${where}: ${id} version went back from ${seen.get(id)} to ${t.version}`);
    seen.set(id, t.version);
  }
  await checkServed(s, tasks, where);
  checkAudit(repo, tasks, acked, where);
  // Audit records the restart took from the journal (acknowledged, not yet in the segment at the kill).
  stats.replayed_audit_records += Number(/journal replay: .*?\((\d+) audit record/.exec(s.output())?.[1] ?? 0);
  const v = await verifyAudit(sddLayout(repo));
  assert.ok(v.ok, `${where}: audit chain verifies: ${JSON.stringify(v.firstBroken)}`);
  // Recovery commits at start; batches rolled forward commit with the next group commit.
  const matched = await waitFor(() => refMismatches(repo).length === 0, 10_000, 100);
  assert.ok(matched, `${where}: refs/sdd/state matches the files: ${refMismatches(repo).slice(0, 5).join('; ')}`);
  const sample = [...tasks.keys()][0];
  if (sample) {
    const listing = readFileSync(join(repo, '.sdd', 'tasks', sample.slice(-2), `${sample}.json`));
    assert.is(hashObject(repo, `tasks/${sample.slice(-2)}/${sample}.json`), gitBlobId(listing), `${where}: git hash-object agrees`);
  }
  assert.is(fsckErrors(repo), null, `${where}: git fsck --strict is clean`);
}

// The restarted server serves exactly the files: same ids, versions and statuses.
async function checkServed(s: RunningServer, files: Map<string, any>, where: string): Promise<void> {
  const served = new Map<string, any>();
  for (let offset = 0; ; offset += 500) {
    const r = await s.api('GET', `/tasks?limit=500&offset=${offset}`);
    assert.is(r.status, 200, `${where}: list answers`);
    for (const t of r.body.tasks) served.set(t.id, t);
    if (offset + 500 >= r.body.total) break;
  }
  assert.is(served.size, files.size, `${where}: the server holds every task file, and only those`);
  for (const [id, t] of files) {
    const m = served.get(id);
    assert.ok(m && m.version === t.version && m.status === t.status, `${where}: ${id} served as on disk`);
  }
}

// Every change a task file shows is audited, acknowledged or not, exactly once: versions 1..v of every
// task have one record each (details.version). A kill before a journaled record reached its segment
// leaves it in the journal, and the restart appends it. And every acknowledged create and completion is there.
function checkAudit(repo: string, tasks: Map<string, any>, acked: Map<string, Acked>, where: string): void {
  const actions = new Map<string, Set<string>>();
  const versions = new Map<string, Set<number>>();
  const twice: string[] = [];
  for (const r of auditRecords(repo)) {
    if (r.resource_type !== 'task') continue;
    const set = actions.get(r.resource_id) ?? new Set<string>();
    set.add(r.action);
    actions.set(r.resource_id, set);
    const vs = versions.get(r.resource_id) ?? new Set<number>();
    if (vs.has(r.details?.version)) twice.push(`${r.resource_id} v${r.details?.version} ${r.action}`);
    vs.add(r.details?.version);
    versions.set(r.resource_id, vs);
  }
  const missing: string[] = [];
  for (const [id, a] of acked) {
    if (a.createdAcked && !actions.get(id)?.has('task.create')) missing.push(`${id}: task.create`);
    if (a.completedAcked && !actions.get(id)?.has('task.complete')) missing.push(`${id}: task.complete`);
  }
  for (const [id, t] of tasks) {
    for (let v = 1; v <= t.version; v++) if (!versions.get(id)?.has(v)) missing.push(`${id}: v${v} of v${t.version} (${t.status}) has no audit record`);
  }
  assert.equal(missing, [], `${where}: every change on disk is audited`);
  assert.equal(twice, [], `${where}: no change is audited twice`);
}

test.run();
