// The steal planner, by example and as a property over thousands of random clusters (seeded, reproducible).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pickTasks, planSteal, STEAL_LIMITS, type HeldTask, type NodeStatus, type StealNode } from '../../src/cluster/index.ts';

// mulberry32: a small seeded generator, so a failing case can be replayed from its seed.
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]! };
}

const STATUSES: NodeStatus[] = ['ONLINE', 'ONLINE', 'ONLINE', 'CORDONED', 'DRAINING', 'OFFLINE'];

function randomCluster(seed: number) {
  const r = rng(seed);
  const nodes: StealNode[] = [];
  const held = new Map<string, HeldTask[]>();
  const depths: Record<string, number> = {};
  for (let i = 0, n = r.int(0, 8); i < n; i++) {
    const id = `node${i}`;
    const tasks: HeldTask[] = [];
    for (let j = 0, m = r.int(0, 14); j < m; j++) {
      tasks.push({ id: `${id}-t${j}`, status: r.pick(['claimed', 'claimed', 'in_progress'] as const), priority: r.int(0, 3), claimed_at: `2026-01-01T00:00:${String(r.int(10, 59))}.000Z` });
    }
    held.set(id, tasks);
    nodes.push({ id, status: r.pick(STATUSES), availableSlots: r.int(0, 6), claimed: tasks.filter((t) => t.status === 'claimed').length });
    if (r.int(0, 2) > 0) depths[id] = r.int(0, 15);
  }
  if (r.int(0, 3) === 0) depths.ghost = 99;
  return { nodes, held, depths };
}

test('property: never more than 3, never from a node at or under 5, never to a node with fewer than 2 free slots, never an in-progress task', () => {
  for (let seed = 1; seed <= 4000; seed++) {
    const { nodes, held, depths } = randomCluster(seed);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const depth = (n: StealNode) => depths[n.id] ?? n.claimed;
    const plan = planSteal(nodes, depths);
    const why = `seed ${seed}: ${JSON.stringify({ nodes, depths, plan })}`;
    assert.ok(plan.reduce((s, m) => s + m.count, 0) <= STEAL_LIMITS.maxPerCall, why);
    const given = new Map<string, number>(), received = new Map<string, number>();
    for (const m of plan) {
      const donor = byId.get(m.donor)!, receiver = byId.get(m.receiver)!;
      assert.ok(donor && receiver && m.donor !== m.receiver && m.count > 0, why);
      assert.ok(depth(donor) > STEAL_LIMITS.overload, why);
      assert.ok(receiver.status === 'ONLINE' && receiver.availableSlots >= STEAL_LIMITS.idle && depth(receiver) <= STEAL_LIMITS.overload, why);
      given.set(m.donor, (given.get(m.donor) ?? 0) + m.count);
      received.set(m.receiver, (received.get(m.receiver) ?? 0) + m.count);
    }
    for (const [id, n] of given) assert.ok(n <= Math.min(byId.get(id)!.claimed, depth(byId.get(id)!) - STEAL_LIMITS.overload), why);
    for (const [id, n] of received) assert.ok(n <= byId.get(id)!.availableSlots, why);
    // Liveness: when a donor with claimed work and a receiver exist, something moves.
    const canGive = nodes.some((n) => depth(n) > STEAL_LIMITS.overload && n.claimed > 0);
    const canTake = nodes.some((n) => n.status === 'ONLINE' && n.availableSlots >= STEAL_LIMITS.idle && depth(n) <= STEAL_LIMITS.overload);
    assert.is(plan.length > 0, canGive && canTake, why);
    for (const m of plan) {
      const picked = pickTasks(held.get(m.donor)!, m.count);
      assert.is(picked.length, m.count, why);
      for (const id of picked) assert.is(held.get(m.donor)!.find((t) => t.id === id)!.status, 'claimed', why);
    }
  }
});

test('the deepest donor gives to the freest receiver first; the total stops at 3', () => {
  const nodes: StealNode[] = [
    { id: 'a', status: 'ONLINE', availableSlots: 0, claimed: 9 },
    { id: 'b', status: 'OFFLINE', availableSlots: 0, claimed: 8 },
    { id: 'c', status: 'ONLINE', availableSlots: 2, claimed: 0 },
    { id: 'd', status: 'ONLINE', availableSlots: 5, claimed: 1 },
    { id: 'e', status: 'CORDONED', availableSlots: 6, claimed: 0 },
  ];
  assert.equal(planSteal(nodes, { a: 7, b: 12 }), [{ donor: 'b', receiver: 'd', count: 3 }]);
  assert.equal(planSteal(nodes, { a: 7, b: 6 }), [{ donor: 'a', receiver: 'd', count: 2 }, { donor: 'b', receiver: 'd', count: 1 }]);
  assert.equal(planSteal(nodes, {}), [{ donor: 'a', receiver: 'd', count: 3 }], 'without reported depths the claimed counts are the queues');
  assert.equal(planSteal(nodes, { a: 5, b: 5 }), [], 'a node at the threshold keeps its tasks');
});

test('picked tasks: claimed only, most urgent first (priority, then oldest claim)', () => {
  const held: HeldTask[] = [
    { id: 'x', status: 'claimed', priority: 2, claimed_at: '2026-01-01T00:00:01.000Z' },
    { id: 'y', status: 'in_progress', priority: 0, claimed_at: '2026-01-01T00:00:00.000Z' },
    { id: 'z', status: 'claimed', priority: 0, claimed_at: '2026-01-01T00:00:05.000Z' },
    { id: 'w', status: 'claimed', priority: 0, claimed_at: '2026-01-01T00:00:02.000Z' },
  ];
  assert.equal(pickTasks(held, 3), ['w', 'z', 'x']);
  assert.equal(pickTasks(held, 9), ['w', 'z', 'x']);
});

test.run();
