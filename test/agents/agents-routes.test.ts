import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogFollowers, readLogTail } from '../../src/agents/index.ts';
import { addTenant } from '../../src/auth/index.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { ADMIN, sessionLog, sleep, startAgents, type AgentsHarness } from './harness.ts';

const T = suite('agent routes');
let h: AgentsHarness | undefined;
T.after.each(async () => { await h?.close(); h = undefined; });

const count = (kind: string) => process.getActiveResourcesInfo().filter((k) => k === kind).length;

// An EventSource with the admin bearer token (and an optional Last-Event-ID), collecting every log frame.
function listen(url: string, lastId?: string) {
  const frames: { id: string; line: string }[] = [];
  const es = new EventSource(url, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${ADMIN}`, ...(lastId ? { 'last-event-id': lastId } : {}) } }),
  });
  es.addEventListener('log', (e) => frames.push({ id: e.lastEventId, line: JSON.parse(e.data).line }));
  return { es, frames };
}

async function until(ok: () => boolean, ms = 10_000, what = 'condition') {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

T('GET /agents: one synthetic entry per claimed or in-progress task when no session is live, narrowed to the tenant', async () => {
  h = await startAgents();
  await addTenant(h.layout, 'acme');
  const a = await h.create('claimed by a human');
  const b = await h.create('left open');
  const acmeH = { 'x-tenant-id': 'acme' };
  const c = (await h.api('POST', '/tasks', { title: 'acme work' }, acmeH)).body;
  assert.is((await h.api('POST', `/tasks/${a.id}/claim?claimed_by_session=ext-7`)).status, 200);
  assert.is((await h.api('POST', `/tasks/${c.id}/claim?claimed_by_session=acme-1`, undefined, acmeH)).status, 200);
  const list = await h.api('GET', '/agents');
  assert.equal(list.body.map((e: any) => [e.session_id, e.task_id, e.task_title, e.synthetic, e.status]), [['ext-7', a.id, 'claimed by a human', true, 'starting']]);
  const acme = await h.api('GET', '/agents?tenant=acme');
  assert.equal(acme.body.map((e: any) => e.task_id), [c.id]);
  void b;
});

T('GET /agents/comparison counts only the caller\'s tenant', async () => {
  h = await startAgents();
  await addTenant(h.layout, 'acme');
  const run = (tenant: string | undefined, adapter: string) => JSON.stringify({
    session_id: 's', task_id: 't', ...(tenant ? { tenant } : {}), adapter, model: 'm', outcome: 'succeeded', seconds: 1, gates_passed: true, cost_usd: null, finished_at: '2026-01-01T00:00:00.000Z',
  });
  mkdirSync(dirname(h.layout.metricsRuns), { recursive: true });
  writeFileSync(h.layout.metricsRuns, [run('default', 'claude'), run(undefined, 'claude'), run('acme', 'codex')].join('\n') + '\n');
  const mine = (await h.api('GET', '/agents/comparison')).body;
  assert.equal(mine.map((m: any) => [m.adapter, m.tasks]), [['claude', 2]], 'records from before tenants were recorded count as default');
  const acme = (await h.api('GET', '/agents/comparison?tenant=acme')).body;
  assert.equal(acme.map((m: any) => [m.adapter, m.tasks]), [['codex', 1]]);
});

T('GET /agents lists live sessions (not synthetic) with their task', async () => {
  h = await startAgents();
  const t = await h.create('hang here', ['hang']);
  await h.step();
  const list = await h.api('GET', '/agents');
  assert.is(list.body.length, 1);
  const e = list.body[0];
  assert.equal([e.task_id, e.task_title, e.status, e.adapter, e.synthetic, e.branch], [t.id, 'hang here', 'running', 'generic', undefined, `agent/${e.session_id}`]);
  assert.is(e.token_id, undefined, 'no secrets in the entry');
});

T('logs: whole log, a tail cut at a line start, 404 without a log file', async () => {
  const tmp = makeTempDir('svc-log-');
  const f = `${tmp.dir}/x.log`;
  writeFileSync(f, 'alpha\nbravo\ncharlie\n');
  assert.equal(await readLogTail(f), { content: 'alpha\nbravo\ncharlie\n', size: 20 });
  assert.equal(await readLogTail(f, 10), { content: 'charlie\n', size: 20 });
  assert.equal(await readLogTail(f, 8), { content: 'charlie\n', size: 20 }, 'window starting on a line start keeps it');
  assert.is(await readLogTail(`${tmp.dir}/none.log`), null);
  tmp.cleanup();
  h = await startAgents();
  await h.create('talks', ['log lines=3 text=hello', 'hang']);
  await h.step();
  const sid = h.orch.sessions()[0]!.session_id;
  await until(() => /hello 3/.test(sessionLog(h!.layout, sid)));
  const text = sessionLog(h.layout, sid);
  const from = text.lastIndexOf('hello 3');
  const r = await h.api('GET', `/agents/${sid}/logs?tail_bytes=${Buffer.byteLength(text.slice(from)) + 3}`);
  assert.equal([r.status, r.body.content], [200, text.slice(from)]);
  assert.is(r.body.size, Buffer.byteLength(sessionLog(h.layout, sid)));
  assert.is((await h.api('GET', '/agents/backend-00000000/logs')).status, 404);
  assert.is((await h.api('GET', `/agents/${sid}/logs?tail_bytes=-1`)).status, 422);
});

T('SSE: lines arrive live with byte-offset ids, Last-Event-ID resumes, and a closed client frees its watcher and timers', async () => {
  h = await startAgents();
  await h.create('streams', ['log lines=3 text=first', 'sleep ms=700', 'log lines=2 text=second', 'hang']);
  await h.step();
  const sid = h.orch.sessions()[0]!.session_id;
  const watchers = count('FSEventWrap');
  const a = listen(`${h.server.url}/agents/${sid}/stream`);
  await until(() => a.frames.some((f) => f.line === 'first 3'), 10_000, 'first lines');
  assert.not.ok(a.frames.some((f) => f.line.startsWith('second')), 'second batch not yet written');
  await until(() => a.frames.some((f) => f.line === 'second 2'), 10_000, 'live lines');
  const log = Buffer.from(sessionLog(h.layout, sid));
  for (const f of a.frames) assert.is(log.subarray(0, Number(f.id)).toString().endsWith(`${f.line}\n`), true, `id of ${f.line}`);
  assert.is(h.followers.size, 1);
  assert.is(count('FSEventWrap'), watchers + 1);
  a.es.close();
  await until(() => h!.followers.size === 0, 5_000, 'follower freed');
  // A closed fs.watch handle leaves the active list once libuv has run its close callback.
  await until(() => count('FSEventWrap') === watchers, 5_000, 'fs watcher closed');
  const at = a.frames.findIndex((f) => f.line === 'first 2');
  const b = listen(`${h.server.url}/agents/${sid}/stream`, a.frames[at]!.id);
  const rest = a.frames.slice(at + 1);
  await until(() => b.frames.length >= rest.length, 10_000, 'resumed lines');
  assert.equal(b.frames.slice(0, rest.length), rest, 'resumes right after the given id');
  assert.is(b.frames[0]!.line, 'first 3');
  b.es.close();
  await until(() => h!.followers.size === 0, 5_000, 'second follower freed');
});

T('a follower of a log that does not exist yet picks it up when it appears, and close() stops it', async () => {
  const tmp = makeTempDir('svc-follow-');
  const f = `${tmp.dir}/logs/s.log`;
  mkdirSync(dirname(f), { recursive: true });
  const got: string[] = [];
  const followers = new LogFollowers();
  const handle = followers.follow(f, 0, (line) => got.push(line), { pollMs: 50 });
  appendFileSync(f, 'one\ntw');
  await until(() => got.length === 1);
  appendFileSync(f, 'o\n');
  await until(() => got.length === 2);
  assert.equal(got, ['one', 'two']);
  handle.close();
  appendFileSync(f, 'three\n');
  await sleep(150);
  assert.equal(got, ['one', 'two']);
  assert.is(followers.size, 0);
  tmp.cleanup();
});

T.run();
