// The registry's pure rules: the state table, registration by (name, url), heartbeats, staleness, the status summary.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  SETTING_TABLE, claimRefusal, clusterStatus, heartbeat, loadedEntries, nodeRecord, operate, registered, registryFile, sameNode, staleIds, statusOf,
  type NodeEntry, type OperatorEvent, type Setting,
} from '../../src/cluster/index.ts';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const node = (id: string, over: Partial<NodeEntry> = {}): NodeEntry => ({ ...registered(undefined, { name: id, url: `http://${id}` }, T0, id), ...over });

test('every (setting, operator event) pair: allowed pairs give the table\'s setting, the rest are refused with a reason', () => {
  const expected: Record<Setting, Record<OperatorEvent, Setting | null>> = {
    ONLINE: { cordon: 'CORDONED', uncordon: 'ONLINE', drain: 'DRAINING' },
    CORDONED: { cordon: 'CORDONED', uncordon: 'ONLINE', drain: 'DRAINING' },
    DRAINING: { cordon: null, uncordon: 'ONLINE', drain: 'DRAINING' },
  };
  for (const setting of Object.keys(SETTING_TABLE) as Setting[]) {
    for (const alive of [true, false]) {
      for (const event of ['cordon', 'uncordon', 'drain'] as OperatorEvent[]) {
        const out = operate(node('aaaaaaaaaaaa', { setting, alive }), event);
        const want = expected[setting][event];
        if (want === null) {
          assert.ok('refused' in out, `${setting} ${event}`);
          assert.match((out as { refused: string }).refused, `Cannot ${event} node 'aaaaaaaaaaaa'`);
        } else {
          assert.ok('node' in out, `${setting} ${event}`);
          const n = (out as { node: NodeEntry }).node;
          assert.is(n.setting, want);
          // An offline node keeps being reported offline; its setting waits for its return.
          assert.is(statusOf(n), alive ? want : 'OFFLINE');
        }
      }
    }
  }
});

test('a heartbeat brings an offline node back to its setting: online, or still cordoned / draining', () => {
  for (const setting of ['ONLINE', 'CORDONED', 'DRAINING'] as Setting[]) {
    const back = heartbeat(node('bbbbbbbbbbbb', { setting, alive: false, lastHeartbeat: null }), { available_slots: 2, active_agents: 4 }, T0 + 5000);
    assert.is(statusOf(back), setting);
    assert.is(back.lastHeartbeat, T0 + 5000);
    assert.equal([back.capacity.available_slots, back.capacity.active_agents], [2, 4]);
  }
});

test('re-registration matches the same non-blank name and url only, and keeps registered_at and the setting', () => {
  const a = node('aaaaaaaaaaaa', { setting: 'CORDONED' });
  const entries = [a, node('cccccccccccc', { name: 'x', url: '' })];
  assert.is(sameNode(entries, 'aaaaaaaaaaaa', 'http://aaaaaaaaaaaa'), a);
  assert.is(sameNode(entries, 'aaaaaaaaaaaa', 'http://other'), undefined);
  assert.is(sameNode(entries, 'x', ''), undefined, 'a blank url never matches');
  assert.is(sameNode(entries, '', 'http://aaaaaaaaaaaa'), undefined, 'a blank name never matches');
  assert.is(sameNode(entries, '  ', '  '), undefined);
  const again = registered(a, { name: 'aaaaaaaaaaaa', url: 'http://aaaaaaaaaaaa', capacity: { max_agents: 9 }, labels: { gpu: 'no' } }, T0 + 60_000, 'ffffffffffff');
  assert.is(again.id, 'aaaaaaaaaaaa');
  assert.is(again.registeredAt, T0);
  assert.is(again.lastHeartbeat, T0 + 60_000);
  assert.is(again.setting, 'CORDONED');
  assert.equal([again.capacity.max_agents, again.capacity.available_slots], [9, 9]);
  assert.equal(again.labels, { gpu: 'no' });
});

test('staleness: nodes that heartbeat and are node_timeout_s old go stale; never-heartbeat (loaded) nodes are left alone', () => {
  const fresh = node('aaaaaaaaaaaa', { lastHeartbeat: T0 - 59_999 });
  const edge = node('bbbbbbbbbbbb', { lastHeartbeat: T0 - 60_000 });
  const loaded = node('cccccccccccc', { alive: false, lastHeartbeat: null });
  const gone = node('dddddddddddd', { alive: false, lastHeartbeat: T0 - 999_999 });
  assert.equal(staleIds([fresh, edge, loaded, gone], T0, 60_000), ['bbbbbbbbbbbb']);
});

test('claims: unknown, cordoned and draining nodes are refused with a reason; online and offline ones may claim', () => {
  assert.match(claimRefusal(undefined, 'eeeeeeeeeeee')!, 'not registered');
  assert.match(claimRefusal(node('aaaaaaaaaaaa', { setting: 'CORDONED' }), 'aaaaaaaaaaaa')!, 'cordoned');
  assert.match(claimRefusal(node('aaaaaaaaaaaa', { setting: 'DRAINING' }), 'aaaaaaaaaaaa')!, 'draining');
  assert.is(claimRefusal(node('aaaaaaaaaaaa'), 'aaaaaaaaaaaa'), null);
  assert.is(claimRefusal(node('aaaaaaaaaaaa', { alive: false }), 'aaaaaaaaaaaa'), null);
});

test('the registry file keeps the operator\'s setting and no liveness; loading it gives offline nodes that never heartbeat', () => {
  const entries = [node('aaaaaaaaaaaa', { setting: 'DRAINING' }), heartbeat(node('bbbbbbbbbbbb'), { available_slots: 1, active_agents: 5 }, T0)];
  const file = JSON.parse(JSON.stringify(registryFile(entries, 7)));
  assert.is(file.version, 7);
  assert.equal(file.nodes.map((n: { status: string }) => n.status), ['DRAINING', 'ONLINE']);
  assert.not.ok('last_heartbeat' in file.nodes[0] || 'available_slots' in file.nodes[1].capacity);
  const back = loadedEntries({ ...file, nodes: [...file.nodes, { id: '../etc' }, null] });
  assert.equal(back.map((e) => [e.id, statusOf(e), e.setting, nodeRecord(e).last_heartbeat, e.capacity.available_slots]), [
    ['aaaaaaaaaaaa', 'OFFLINE', 'DRAINING', 'never', 0], ['bbbbbbbbbbbb', 'OFFLINE', 'ONLINE', 'never', 0],
  ]);
});

test('cluster status counts each status, sums capacity of online nodes, and lists what each node holds', () => {
  const entries = [
    heartbeat(node('aaaaaaaaaaaa'), { available_slots: 4, active_agents: 2 }, T0),
    heartbeat(node('bbbbbbbbbbbb', { setting: 'CORDONED' }), { available_slots: 1, active_agents: 5 }, T0),
    node('cccccccccccc', { alive: false, lastHeartbeat: null }),
  ];
  const s = clusterStatus(entries, new Map([['cccccccccccc', ['t1', 't2']], ['aaaaaaaaaaaa', []]]));
  assert.equal([s.total_nodes, s.online_nodes, s.cordoned_nodes, s.draining_nodes, s.offline_nodes], [3, 1, 1, 0, 1]);
  assert.equal([s.total_capacity, s.available_slots, s.active_agents], [6, 4, 7]);
  assert.equal(s.claimed, { cccccccccccc: ['t1', 't2'] });
  assert.is(s.nodes[2]!.last_heartbeat, 'never');
});

test.run();
