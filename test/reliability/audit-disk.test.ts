// The audit segment refuses writes (SVC_TEST_AUDIT_FAULT_FILE) while the task store works: the change and
// its signed audit record are durable in the journal (200), the record reaches the segment once the disk
// clears, or at the next start, exactly once.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyAudit } from '../../src/observe/audit-verify.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { auditRecords, waitFor } from './lib.ts';

const test = suite('audit disk');
let repo: TempRepo;
let s: RunningServer;
let fault: string;
const full = () => writeFileSync(fault, '');
const clear = () => rmSync(fault, { force: true });
const start = () => startServer(repo.dir, { args: ['--no-orchestrator'], env: { SVC_TEST_AUDIT_FAULT_FILE: fault } });
const audited = (id: string, version: number) => auditRecords(repo.dir).find((r) => r.resource_id === id && r.details?.version === version);

test.before(async () => {
  repo = makeRepo('svc-audit-disk-');
  fault = join(repo.dir, '.sdd', 'runtime', 'test-fault-audit');
  s = await start();
});
test.after(async () => {
  clear();
  await s.kill();
  repo.cleanup();
});

test('a refused audit segment write leaves the record waiting (backlog), and it follows once the disk clears', async () => {
  const t = (await s.api('POST', '/tasks', { title: 'audited later', role: 'ad' })).body;
  full();
  const r = await s.api('POST', `/tasks/${t.id}/claim`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is((await s.api('GET', `/tasks/${t.id}`)).body.status, 'claimed', 'the journaled change stands');
  assert.not.ok(audited(t.id, 2), 'no record while the disk refuses');
  assert.match((await s.api('GET', '/metrics')).body, /svc_store_backlog\{kind="files"\} [1-9]/, 'the waiting record shows in the backlog');
  clear();
  assert.ok(await waitFor(() => Boolean(audited(t.id, 2)), 10_000, 50), 'the claim record arrives after the disk clears');
  assert.is(audited(t.id, 2).action, 'task.claim');
  assert.ok((await verifyAudit(sddLayout(repo.dir))).ok);
});

test('a server stopped while the audit disk still refuses leaves the entry for the next start', async () => {
  const t = (await s.api('POST', '/tasks', { title: 'audited at restart', role: 'ad' })).body;
  await s.api('POST', `/tasks/${t.id}/claim`);
  full();
  assert.is((await s.api('POST', `/tasks/${t.id}/complete`, { result_summary: 'done while the audit disk is full' })).status, 200);
  assert.is(await s.stop(), 0, 'a clean stop, though the audit record is still missing');
  assert.not.ok(audited(t.id, 3));
  clear();
  s = await start();
  const rec = audited(t.id, 3);
  assert.ok(rec, 'appended at start from the journal');
  assert.equal([rec.action, rec.details.to], ['task.complete', 'done']);
  assert.is(auditRecords(repo.dir).filter((r) => r.resource_id === t.id && r.details?.version === 3).length, 1, 'exactly once');
  assert.is((await s.api('GET', `/tasks/${t.id}`)).body.status, 'done');
  assert.ok((await verifyAudit(sddLayout(repo.dir))).ok);
});

test.run();
