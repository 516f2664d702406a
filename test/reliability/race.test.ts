// Race suite: many concurrent clients on one task (or one set of tasks), many rounds; exactly one
// winner, losers get the documented 404/409 (never 5xx), and the final state agrees with the winner.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { liftQuota, report, rounds, seeded } from './lib.ts';

const CLIENTS = 16;
const ROUNDS = rounds(40, 250);
const stats = { claims: 0, double_claims: 0, five_xx: 0, transitions: 0, bad_chains: 0 };
let repo: TempRepo;
let s: RunningServer;

const test = suite('race');
test.before(async () => {
  repo = makeRepo('svc-race-');
  liftQuota(repo.dir);
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
test.after(async () => {
  await s.kill();
  repo.cleanup();
});

const create = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/tasks', body);
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
};
const get = async (id: string) => (await s.api('GET', `/tasks/${id}`)).body;
const count5xx = (rs: { status: number }[]) => { const n = rs.filter((r) => r.status >= 500).length; stats.five_xx += n; return n; };

test(`claim by next → exactly one winner of ${CLIENTS}, losers 404`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const role = `next${round}`;
    const task = await create({ title: `next race ${round}`, role });
    const rs = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => s.api('GET', `/tasks/next/${role}?claimed_by_session=n${round}-${c}`)));
    stats.claims += CLIENTS;
    assert.is(count5xx(rs), 0, 'no 5xx');
    const wins = rs.filter((r) => r.status === 200);
    if (wins.length !== 1) stats.double_claims += Math.max(0, wins.length - 1);
    assert.is(wins.length, 1, `round ${round}: one winner`);
    assert.ok(rs.every((r) => r.status === 200 || (r.status === 404 && typeof r.body.detail === 'string')), 'losers answer 404 with a detail');
    const final = await get(task.id);
    assert.is(final.status, 'claimed');
    assert.is(final.claimed_by_session, wins[0]!.body.claimed_by_session);
    assert.is(final.version, wins[0]!.body.version);
  }
});

test(`claim with expected_version → exactly one winner of ${CLIENTS}, losers 409`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const task = await create({ title: `cas race ${round}`, role: 'cas' });
    const rs = await Promise.all(Array.from({ length: CLIENTS }, (_, c) =>
      s.api('POST', `/tasks/${task.id}/claim?expected_version=${task.version}&claimed_by_session=c${round}-${c}`)));
    stats.claims += CLIENTS;
    assert.is(count5xx(rs), 0, 'no 5xx');
    const wins = rs.filter((r) => r.status === 200);
    if (wins.length !== 1) stats.double_claims += Math.max(0, wins.length - 1);
    assert.is(wins.length, 1, `round ${round}: one winner`);
    assert.ok(rs.every((r) => r.status === 200 || (r.status === 409 && typeof r.body.detail === 'string')), 'losers answer 409 with a detail');
    const final = await get(task.id);
    assert.is(final.claimed_by_session, wins[0]!.body.claimed_by_session);
    assert.is(final.version, task.version + 1);
  }
});

test(`claim-batch of the same tasks → exactly one winner of ${CLIENTS}, all or nothing`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ title: `batch race ${round}.${i}`, role: 'batch' })).id);
    const rs = await Promise.all(Array.from({ length: CLIENTS }, (_, c) =>
      s.api('POST', '/tasks/claim-batch', { task_ids: ids, claimed_by_session: `b${round}-${c}` })));
    stats.claims += CLIENTS;
    assert.is(count5xx(rs), 0, 'no 5xx');
    const wins = rs.filter((r) => r.status === 200 && r.body.claimed.length > 0);
    if (wins.length !== 1) stats.double_claims += Math.max(0, wins.length - 1);
    assert.is(wins.length, 1, `round ${round}: one winner`);
    assert.is(wins[0]!.body.claimed.length, ids.length, 'the winner holds every task');
    for (const r of rs.filter((x) => x !== wins[0])) {
      const lostBatch = r.status === 200 && r.body.claimed.length === 0 && r.body.failed.length > 0;
      assert.ok(lostBatch || r.status === 409 || r.status === 404, `loser answer: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const session = wins[0]!.body.claimed[0].claimed_by_session;
    for (const id of ids) {
      const t = await get(id);
      assert.is(t.status, 'claimed');
      assert.is(t.claimed_by_session, session);
    }
  }
});

test('claim-batch of overlapping sets → no task held twice, each answer all or nothing', async () => {
  const rnd = seeded();
  for (let round = 0; round < Math.ceil(ROUNDS / 2); round++) {
    const pool: string[] = [];
    for (let i = 0; i < 5; i++) pool.push((await create({ title: `overlap race ${round}.${i}`, role: 'overlap' })).id);
    const sets = Array.from({ length: CLIENTS }, () => [...pool].sort(() => rnd.next() - 0.5).slice(0, rnd.int(1, 3)));
    const rs = await Promise.all(sets.map((set, c) => s.api('POST', '/tasks/claim-batch', { task_ids: set, claimed_by_session: `o${round}-${c}` })));
    stats.claims += CLIENTS;
    assert.is(count5xx(rs), 0, 'no 5xx');
    const holder = new Map<string, string>();
    rs.forEach((r, c) => {
      if (r.status !== 200 || r.body.claimed.length === 0) return;
      assert.is(r.body.claimed.length, sets[c]!.length, 'all or nothing');
      for (const t of r.body.claimed) {
        if (holder.has(t.id)) stats.double_claims++;
        assert.not.ok(holder.has(t.id), `${t.id} claimed twice`);
        holder.set(t.id, `o${round}-${c}`);
      }
    });
    for (const id of pool) {
      const t = await get(id);
      assert.is(t.status === 'claimed' ? t.claimed_by_session : undefined, holder.get(id), `${id} state agrees with the winners`);
    }
  }
});

// complete, fail, release and cancel on one claimed task: every 2xx answer is one step of one chain.
test('complete/fail/release/cancel racing on one task → answers form one valid chain of transitions', async () => {
  const rnd = seeded();
  const verbs = ['complete', 'fail', 'release', 'cancel'] as const;
  const body = { complete: { result_summary: 'race winner' }, fail: { reason: 'race' }, release: { reason: 'race' }, cancel: { reason: 'race' } };
  for (let round = 0; round < ROUNDS; round++) {
    const task = await create({ title: `verb race ${round}`, role: 'verbs' });
    const claimed = (await s.api('POST', `/tasks/${task.id}/claim?claimed_by_session=v${round}`)).body;
    const picks = Array.from({ length: CLIENTS }, (_, c) => verbs[(c + round) % 4]!).sort(() => rnd.next() - 0.5);
    const rs = await Promise.all(picks.map((v) => s.api('POST', `/tasks/${task.id}/${v}`, body[v])));
    assert.is(count5xx(rs), 0, 'no 5xx');
    assert.ok(rs.every((r) => r.status === 200 || (r.status === 409 && typeof r.body.detail === 'string')), `losers answer 409: ${rs.map((r) => r.status)}`);
    const wins = rs.map((r, i) => ({ verb: picks[i]!, task: r.body })).filter((_, i) => rs[i]!.status === 200).sort((a, b) => a.task.version - b.task.version);
    stats.transitions += wins.length;
    let state = claimed.status, version = claimed.version;
    for (const w of wins) {
      const ok = w.task.version === version + 1 && allowed(w.verb, state) === w.task.status;
      if (!ok) stats.bad_chains++;
      assert.ok(ok, `round ${round}: ${w.verb} from ${state} v${version} answered ${w.task.status} v${w.task.version}`);
      state = w.task.status;
      version = w.task.version;
    }
    assert.ok(wins.length >= 1, 'someone wins');
    const final = await get(task.id);
    assert.is(final.status, state, 'final state is the last winner\'s');
    assert.is(final.version, version);
  }
});

test.after(() => report('race', { ...stats, clients: CLIENTS, rounds_per_test: ROUNDS }));

// DECISIONS.md transitions for these four verbs; undefined = 409.
function allowed(verb: string, from: string): string | undefined {
  const table: Record<string, Record<string, string>> = {
    complete: { open: 'done', claimed: 'done', in_progress: 'done', waiting_for_subtasks: 'done' },
    fail: { open: 'failed', claimed: 'failed', in_progress: 'failed', blocked: 'failed', waiting_for_subtasks: 'failed' },
    release: { claimed: 'open', in_progress: 'open' },
    cancel: { open: 'cancelled', claimed: 'cancelled', in_progress: 'cancelled', done: 'cancelled', blocked: 'cancelled', waiting_for_subtasks: 'cancelled' },
  };
  return table[verb]?.[from];
}

test.run();
