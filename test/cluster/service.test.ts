// ClusterService over a real .sdd tree with a manual clock: the staleness sweep, persistence, audit.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterService, clusterMetrics, clusterFiles, createNodeTokens, type ClusterTasks } from '../../src/cluster/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import type { Principal } from '../../src/lib/route.ts';
import { createRecordStore, sddLayout } from '../../src/store/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const ADMIN: Principal = { kind: 'env', role: 'admin', tenant: null, actor: 'env' };
const noTasks: ClusterTasks = { heldByNode: () => new Map(), returnToOpen: async () => false, install() {} };

function build(dir: string, clock = manualClock()) {
  const layout = sddLayout(dir);
  const audited: { action: string; resource_id: string | null }[] = [];
  let n = 0;
  const svc = new ClusterService({
    store: createRecordStore({ layout, log: silentLogger(), committer: { touch() {} } }), file: clusterFiles(layout).nodes, clock, log: silentLogger(),
    audit: { append: async (e) => { audited.push(e); } }, metrics: clusterMetrics(() => ({})),
    tokens: createNodeTokens({ secret: 's'.repeat(40), clock, newJti: () => `jti-${++n}`, expiryHours: 24 }), tasks: noTasks,
    newId: () => (++n).toString(16).padStart(12, '0'), nodeTimeoutS: 60,
  });
  return { svc, clock, audited, layout };
}

test('staleness with a manual clock: offline at node_timeout_s, not a millisecond before; a heartbeat brings it back', async () => {
  const tmp = makeTempDir();
  try {
    const { svc, clock, audited } = build(tmp.dir);
    const { id } = await svc.register({ name: 'w1', url: 'http://w1' }, ADMIN);
    clock.advance(59_999);
    assert.equal(await svc.sweep(), []);
    assert.is(svc.list()[0]!.status, 'ONLINE');
    clock.advance(1);
    assert.equal(await svc.sweep(), [id]);
    assert.is(svc.list()[0]!.status, 'OFFLINE');
    assert.equal(svc.list('offline').map((x) => x.id), [id]);
    assert.equal(await svc.sweep(), [], 'an offline node is not swept twice');
    assert.ok(audited.some((e) => e.action === 'cluster.node.offline' && e.resource_id === id));
    const back = await svc.heartbeat(id, { available_slots: 6, active_agents: 0 }, ADMIN);
    assert.is(back.status, 'ONLINE');
    assert.is(back.last_heartbeat, new Date(clock.now()).toISOString());
    assert.ok(audited.some((e) => e.action === 'cluster.node.online'));
  } finally {
    tmp.cleanup();
  }
});

test('the registry survives a restart: nodes load OFFLINE with last_heartbeat never, and keep a cordon', async () => {
  const tmp = makeTempDir();
  try {
    const first = build(tmp.dir);
    const a = await first.svc.register({ name: 'a', url: 'http://a' }, ADMIN);
    const b = await first.svc.register({ name: 'b', url: 'http://b', capacity: { max_agents: 2 } }, ADMIN);
    await first.svc.operate(b.id, 'cordon', ADMIN);
    for (let i = 0; i < 5; i++) await first.svc.heartbeat(a.id, { available_slots: i, active_agents: 6 - i }, ADMIN);
    const file = JSON.parse(readFileSync(clusterFiles(first.layout).nodes, 'utf8'));
    assert.is(file.version, 3, 'two registrations and a cordon; heartbeats write nothing');
    const second = build(tmp.dir);
    assert.is(await second.svc.load(), 2);
    assert.equal(second.svc.list().map((x) => [x.id, x.status, x.last_heartbeat, x.capacity.max_agents]), [
      [a.id, 'OFFLINE', 'never', 6], [b.id, 'OFFLINE', 'never', 2],
    ]);
    assert.is((await second.svc.heartbeat(b.id, { available_slots: 2, active_agents: 0 }, ADMIN)).status, 'CORDONED');
    assert.is((await second.svc.heartbeat(a.id, { available_slots: 2, active_agents: 0 }, ADMIN)).status, 'ONLINE');
  } finally {
    tmp.cleanup();
  }
});

test.run();
