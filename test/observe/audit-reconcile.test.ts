// reconcileAudit: entries journaled with task writes whose audit records a crash prevented.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { createAuditLog } from '../../src/observe/audit.ts';
import { reconcileAudit } from '../../src/observe/audit-reconcile.ts';
import { verifyAudit } from '../../src/observe/audit-verify.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('audit reconcile');
const change = (id: string, action: string, version: number) =>
  ({ actor: 'tok-1', action, resource_type: 'task', resource_id: id, details: { from: 'open', to: 'claimed', version } });

function setup() {
  const tmp = makeTempDir('svc-reconcile-');
  const layout = sddLayout(tmp.dir);
  const clock = manualClock(Date.parse('2026-03-02T08:00:00.000Z'));
  const audit = createAuditLog({ layout, clock, log: silentLogger() });
  const records = () => readdirSync(layout.auditDir).sort().flatMap((n) => readFileSync(join(layout.auditDir, n), 'utf8').trim().split('\n').map((l) => JSON.parse(l)));
  return { tmp, layout, clock, audit, records };
}

T('appends, marked recovered, only the journaled changes the log lacks; the chain still verifies', async () => {
  const { tmp, layout, clock, audit, records } = setup();
  await audit.append(change('t1', 'task.create', 1));
  clock.advance(1000);
  await audit.append(change('t1', 'task.claim', 2));
  clock.advance(1000);
  const at = clock.now() - 1500;
  const intents = [
    { entry: change('t1', 'task.claim', 2), at }, // audited before the crash
    { entry: change('t1', 'task.complete', 3), at }, // journaled, never audited
    { entry: change('t2', 'task.create', 1), at },
    { entry: { action: 'task.claim', resource_id: 't3' }, at }, // not an entry (no actor): skipped
  ];
  assert.is(await reconcileAudit(layout, audit, intents, silentLogger()), 2);
  const recs = records();
  assert.equal(recs.map((r) => `${r.resource_id} ${r.action} v${r.details.version}${r.details.recovered ? ' recovered' : ''}`), [
    't1 task.create v1', 't1 task.claim v2', 't1 task.complete v3 recovered', 't2 task.create v1 recovered',
  ]);
  assert.is(recs[2].actor, 'tok-1', 'the journaled actor is kept');
  // A second start with the same journal (say, it crashed again before the checkpoint) adds nothing.
  assert.is(await reconcileAudit(layout, audit, intents, silentLogger()), 0);
  assert.is(records().length, 4);
  await audit.close();
  assert.ok((await verifyAudit(layout)).ok);
  tmp.cleanup();
});

T('records across day segments are found; no intents reads nothing', async () => {
  const { tmp, layout, clock, audit, records } = setup();
  clock.advance(Date.parse('2026-03-02T23:59:59.000Z') - clock.now());
  await audit.append(change('t9', 'task.claim', 4));
  clock.advance(2000);
  await audit.append(change('t8', 'task.claim', 2));
  assert.is(readdirSync(layout.auditDir).length, 2);
  const at = Date.parse('2026-03-02T23:59:58.000Z');
  assert.is(await reconcileAudit(layout, audit, [{ entry: change('t9', 'task.claim', 4), at }, { entry: change('t8', 'task.claim', 2), at }], silentLogger()), 0);
  assert.is(await reconcileAudit(layout, audit, [], silentLogger()), 0);
  assert.is(records().length, 2);
  await audit.close();
  tmp.cleanup();
});

T.run();
