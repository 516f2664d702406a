// The startup poll against local fake trackers: paging, watermarks, rate limits, deadlines, per-source isolation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { webhookMetrics } from '../../src/webhooks/metrics.ts';
import { backoffS, scanPage } from '../../src/webhooks/poll-plan.ts';
import { pollSweep, type PollDeps, type PollSource } from '../../src/webhooks/poll.ts';
import type { Ticket } from '../../src/webhooks/ticket.ts';
import { TRACKERS } from '../../src/webhooks/trackers/registry.ts';
import { openWatermarks, type Watermarks } from '../../src/webhooks/watermarks.ts';
import { fakeIssues, startFakeTracker, type FakeTracker, type FakeTrackerOptions } from '../helpers/fake-trackers.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('webhooks: startup poll');
let tmp: ReturnType<typeof makeTempDir>;
let fakes: FakeTracker[] = [];
let marks: Watermarks;
T.before.each(async () => { tmp = makeTempDir('svc-poll-'); marks = await openWatermarks(join(tmp.dir, 'poll_watermarks.jsonl'), silentLogger()); });
T.after.each(async () => { await Promise.all(fakes.map((f) => f.close())); fakes = []; await marks.close(); tmp.cleanup(); });

const adapter = (name: string) => TRACKERS.find((a) => a.name === name)!;
const PROJECT: Record<string, string> = { tracker_a: 'PROJ', tracker_b: 'octo/app', tracker_c: 'group/app', tracker_d: 'ENG', tracker_e: 'acme/proj' };
async function fake(o: FakeTrackerOptions) { const f = await startFakeTracker(o); fakes.push(f); return f; }
const source = (name: string, url: string, over: Partial<PollSource> = {}, newestFirst = true): PollSource => ({
  name, adapter: adapter(name), target: { api_url: url, project: PROJECT[name]!, token: 'tok', newest_first: newestFirst }, deadlineS: 10, backoffCapS: 5, ...over,
});
function deps(over: Partial<PollDeps> = {}) {
  const got = new Map<string, Ticket>();
  const waits: number[] = [];
  const d: PollDeps = {
    fetch, now: Date.now, sleep: async (ms) => { waits.push(ms); }, jitter: () => 1, watermarks: marks,
    deliver: async (t) => { got.set(`${t.adapter}:${t.id}`, t); }, metrics: webhookMetrics(), log: silentLogger(), ...over,
  };
  return { d, got, waits };
}

for (const name of ['tracker_a', 'tracker_b', 'tracker_c', 'tracker_d', 'tracker_e']) {
  T(`${name}: pages through the list API, delivers every open ticket once, then only newer ones`, async () => {
    const issues = fakeIssues(20, Date.now() - 3_600_000, [4]);
    const f = await fake({ kind: name as FakeTrackerOptions['kind'], issues, pageSize: 6 });
    const { d, got } = deps();
    const r = await pollSweep([source(name, f.url)], d);
    assert.equal(r, { delivered: { [name]: 19 }, errors: {}, timed_out: [] });
    assert.is(got.size, 19);
    assert.ok([...got.values()].every((t) => t.state === 'open' && t.adapter === name && t.title.startsWith('Issue ')));
    assert.is(f.requests.length, 4, 'four pages of six');
    assert.is(marks.get(name), Date.parse(issues[19]!.updated_at));
    // Two tickets change (one closes): the next poll asks for changes since the watermark and delivers just those.
    issues[7]!.updated_at = issues[3]!.updated_at = new Date(Date.now() - 1000).toISOString();
    issues[7]!.state = 'closed';
    const again = deps();
    const r2 = await pollSweep([source(name, f.url)], again.d);
    assert.equal(r2.delivered, { [name]: 2 });
    assert.equal([...again.got.values()].map((t) => [t.title, t.state]).sort(), [['Issue 4', 'closed'], ['Issue 8', 'closed']]);
  });
}

T('newest first: the scan stops at the first ticket at or below the watermark (one page)', async () => {
  const issues = fakeIssues(30, Date.now() - 3_600_000);
  const f = await fake({ kind: 'tracker_e', issues, pageSize: 5 });
  await marks.advance('tracker_e', Date.parse(issues[27]!.updated_at));
  const { d, got } = deps();
  const r = await pollSweep([source('tracker_e', f.url)], d);
  assert.equal(r.delivered, { tracker_e: 2 });
  assert.equal([...got.values()].map((t) => t.title).sort(), ['Issue 29', 'Issue 30']);
  assert.is(f.requests.length, 1);
  assert.is(marks.get('tracker_e'), Date.parse(issues[29]!.updated_at));
  // Oldest first scans every page and skips what is at or below it.
  issues[2]!.updated_at = new Date(Date.now() - 1000).toISOString();
  const all = deps();
  const r2 = await pollSweep([source('tracker_e', f.url, {}, false)], all.d);
  assert.equal([r2.delivered, f.requests.length, [...all.got.values()].map((t) => t.title)], [{ tracker_e: 1 }, 7, ['Issue 3']]);
});

T('rate limited: jittered backoff capped at backoff_cap_s, retried from the first page, then complete', async () => {
  for (const kind of ['tracker_b', 'tracker_c', 'tracker_d'] as const) {
    const f = await fake({ kind, issues: fakeIssues(10, Date.now() - 3_600_000), pageSize: 4, rateLimited: 2, retryAfterS: 600 });
    const { d, got, waits } = deps({ jitter: () => 1 });
    const r = await pollSweep([source(kind, f.url, { backoffCapS: 5 })], d);
    assert.equal(r, { delivered: { [kind]: 10 }, errors: {}, timed_out: [] }, kind);
    // tracker_d's API names no wait: exponential from 1 s.
    assert.equal(waits, kind === 'tracker_d' ? [1000, 2000] : [5000, 5000], `${kind}: Retry-After 600 s capped at 5 s`);
    assert.equal(f.requests.map((q) => q.page), [1, 1, 1, 2, 3], `${kind}: each retry starts over`);
    assert.is(got.size, 10);
  }
  const f = await fake({ kind: 'tracker_c', issues: fakeIssues(3), rateLimited: 2, retryAfterS: 600 });
  const low = deps({ jitter: () => 0 });
  await pollSweep([source('tracker_c', f.url, { backoffCapS: 5 })], low.d);
  assert.equal(low.waits, [2500, 2500], 'jitter 0 waits half the target');
  assert.equal([backoffS(1, null, { baseS: 1, capS: 60, jitter: 1 }), backoffS(3, null, { baseS: 1, capS: 60, jitter: 1 }), backoffS(9, null, { baseS: 1, capS: 60, jitter: 0.5 })], [1, 4, 45]);
});

T('a source rate limited past its attempts, a failing one and a slow one never touch the others', async () => {
  const limited = await fake({ kind: 'tracker_b', issues: fakeIssues(3), rateLimited: 99, retryAfterS: 1 });
  const failing = await fake({ kind: 'tracker_c', issues: fakeIssues(3), failStatus: 500 });
  const slow = await fake({ kind: 'tracker_d', issues: fakeIssues(12, Date.now() - 3_600_000), pageSize: 2, delayMs: 150 });
  const fine = await fake({ kind: 'tracker_a', issues: fakeIssues(5, Date.now() - 3_600_000) });
  const { d, got } = deps();
  const r = await pollSweep([
    source('tracker_b', limited.url), source('tracker_c', failing.url), source('tracker_d', slow.url, { deadlineS: 0.5 }), source('tracker_a', fine.url),
  ], d);
  assert.equal(r.errors, { tracker_b: 'Error: rate limited', tracker_c: 'Error: HTTP 500' });
  assert.equal(r.timed_out, ['tracker_d']);
  assert.is(r.delivered.tracker_a, 5);
  assert.ok(r.delivered.tracker_d! >= 1 && r.delivered.tracker_d! < 12, `cut short after ${r.delivered.tracker_d} ticket(s)`);
  assert.is(limited.requests.length, 3, 'three attempts');
  assert.is([...got.keys()].filter((k) => k.startsWith('tracker_a:')).length, 5);
  // Only the complete poll moved its watermark.
  assert.equal([marks.get('tracker_a') > 0, marks.get('tracker_b'), marks.get('tracker_c'), marks.get('tracker_d')], [true, 0, 0, 0]);
  const lines = readFileSync(join(tmp.dir, 'poll_watermarks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.map((l) => l.source), ['tracker_a']);
});

T('watermarks survive a reopen: the last line of a source wins; a wait past the deadline ends the poll as cut short', async () => {
  await marks.advance('x', 5000);
  await marks.advance('x', 4000);
  await marks.advance('x', 9000);
  await marks.close();
  marks = await openWatermarks(join(tmp.dir, 'poll_watermarks.jsonl'), silentLogger());
  assert.is(marks.get('x'), 9000);
  const f = await fake({ kind: 'tracker_c', issues: fakeIssues(3), rateLimited: 5, retryAfterS: 30 });
  const { d, waits } = deps();
  const r = await pollSweep([source('tracker_c', f.url, { deadlineS: 2, backoffCapS: 60 })], d);
  assert.equal([r.timed_out, waits], [['tracker_c'], []]);
});

T('scanPage: tickets without a time are always delivered', () => {
  const t = (n: number, at: string | null) => ({ adapter: 'a', id: String(n), key: '', title: '', body: '', url: '', state: 'open' as const, labels: [], author: '', updated_at: at });
  const page = [t(1, '2026-01-03T00:00:00Z'), t(2, null), t(3, '2026-01-01T00:00:00Z'), t(4, '2026-01-04T00:00:00Z')];
  assert.equal(scanPage(page, Date.parse('2026-01-02T00:00:00Z'), false).deliver.map((x) => x.id), ['1', '2', '4']);
  assert.equal(scanPage(page, Date.parse('2026-01-02T00:00:00Z'), true), { deliver: [page[0]!, page[1]!], stop: true });
});

T.run();
