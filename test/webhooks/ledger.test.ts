// The replay ledger: the last 4096 ids, bounded on disk, kept across a reopen, torn lines skipped.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { openLedger, ReplayWindow } from '../../src/webhooks/ledger.ts';
import { webhookMetrics } from '../../src/webhooks/metrics.ts';
import { trackerReceiver } from '../../src/webhooks/receiver.ts';
import { hmacHex } from '../../src/webhooks/signature.ts';
import { trackerRegistry } from '../../src/webhooks/trackers/registry.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('webhooks: replay ledger');
const log = silentLogger();
const nowS = () => 1_795_000_000;
let tmp: ReturnType<typeof makeTempDir>;
T.before.each(() => { tmp = makeTempDir('svc-ledger-'); });
T.after.each(() => tmp.cleanup());
const lineCount = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean).length;

T('the window keeps the last N ids; remembering one again makes it the newest', () => {
  const w = new ReplayWindow(3);
  for (const id of ['a', 'b', 'c']) w.remember({ delivery_id: id, ts: 0 });
  w.remember({ delivery_id: 'a', ts: 1 });
  w.remember({ delivery_id: 'd', ts: 2 });
  assert.equal(w.list().map((e) => e.delivery_id), ['c', 'a', 'd']);
  assert.is(w.has('b'), false);
});

T('10,000 distinct deliveries through the receiver: 4096 remembered, the file bounded, the newest still replays after a reopen', async () => {
  const path = join(tmp.dir, 'runtime', 'tracker_webhook_ledger.jsonl');
  const ledger = await openLedger(path, { nowS, log });
  const receive = trackerReceiver({
    trackers: trackerRegistry(), config: () => ({ github: { webhook: { enabled: true, secret_env: 'S', public_url_base: '' }, poll: {} as never } }),
    env: () => 'shh', ledger, sink: { apply: () => { throw new Error('pings make no tickets'); } }, metrics: webhookMetrics(), log,
  });
  const body = Buffer.from('{"zen":"Keep it logically awesome."}');
  const headers = (i: number) => (n: string) => ({ 'x-github-event': 'ping', 'x-github-delivery': `d-${i}`, 'x-hub-signature-256': `sha256=${hmacHex('shh', body)}` } as Record<string, string>)[n];
  let maxLines = 0;
  for (let i = 0; i < 10_000; i += 200) {
    const out = await Promise.all(Array.from({ length: 200 }, (_, k) => receive('github', headers(i + k), body)));
    assert.ok(out.every((r) => r.status === 200 && r.body.status === 'accepted'));
    maxLines = Math.max(maxLines, ledger.lines, lineCount(path));
  }
  assert.is(ledger.size, 4096);
  assert.ok(maxLines <= 2 * 4096 + 200, `file stayed bounded: at most ${maxLines} lines`);
  assert.is((await receive('github', headers(9_999), body)).body.status, 'replay');
  assert.is((await receive('github', headers(10), body)).body.status, 'accepted', 'an evicted id is new again');
  await ledger.close();
  const again = await openLedger(path, { nowS, log });
  assert.is(again.size, 4096);
  assert.ok(again.has('tracker_b:d-9999') && again.has('tracker_b:d-10') && !again.has('tracker_b:d-11'));
  await again.close();
});

T('a torn last line is skipped at open and sealed before the next append', async () => {
  const path = join(tmp.dir, 'ledger.jsonl');
  const a = await openLedger(path, { nowS, log });
  await a.record('x:1', { task_id: 't1' });
  await a.close();
  appendFileSync(path, '{"delivery_id":"x:2","ts":17');
  const b = await openLedger(path, { nowS, log });
  assert.equal([b.has('x:1'), b.has('x:2'), b.get('x:1')?.task_id], [true, false, 't1']);
  await b.record('x:3');
  await b.close();
  const c = await openLedger(path, { nowS, log });
  assert.equal([c.has('x:1'), c.has('x:2'), c.has('x:3')], [true, false, true]);
  await c.close();
});

T('compaction rewrites the file with the window alone while appends keep coming', async () => {
  const path = join(tmp.dir, 'ledger.jsonl');
  const l = await openLedger(path, { nowS, log, cap: 10, compactAt: 20 });
  await Promise.all(Array.from({ length: 55 }, (_, i) => l.record(`k:${i}`)));
  await l.close();
  const ids = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x).delivery_id as string);
  assert.ok(ids.length <= 30, `${ids.length} lines`);
  assert.ok(ids.includes('k:54'));
  const again = await openLedger(path, { nowS, log, cap: 10 });
  assert.is(again.size, 10);
  assert.ok(again.has('k:54') && !again.has('k:0'));
  await again.close();
});

T.run();
