// The editor and SDK clients of the original server read /dashboard/data and /events: an editor client's
// getDashboardData and subscribeToEvents, written here against the field types of DECISIONS.md (an
// EventSource from the `eventsource` package, as such a client uses), parse what svc sends.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const Opt = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));
const Str = Type.String();
const Num = Type.Number();
/** GET /dashboard/data as DECISIONS.md names it (extra fields are allowed: clients ignore them). */
const DashboardData = Type.Object({
  ts: Str,
  stats: Type.Object({ total: Num, open: Num, claimed: Num, done: Num, failed: Num, agents: Num, cost_usd: Num }),
  tasks: Type.Array(Type.Object({
    id: Str, title: Str, role: Str, status: Str, priority: Num,
    assigned_agent: Opt(Str), owned_files: Opt(Type.Array(Str)), created_at: Opt(Str), progress: Opt(Num),
  })),
  agents: Type.Array(Type.Object({
    id: Str, role: Str, status: Str, model: Opt(Str), runtime_s: Num, pid: Opt(Num), task_ids: Opt(Type.Array(Str)), cost_usd: Num,
    tasks: Opt(Type.Array(Type.Object({ id: Str, title: Str }))),
  })),
  live_costs: Type.Object({ spent_usd: Num, budget_usd: Num, percentage_used: Num, should_warn: Type.Boolean(), should_stop: Type.Boolean() }),
  alerts: Type.Array(Type.Object({ level: Str, message: Str, detail: Opt(Str) })),
});
/** The data of every /events frame. */
const BoardEventData = Type.Object({ id: Str, status: Str, version: Type.Union([Num, Type.Null()]) });
const EVENTS = ['task_created', 'task_updated', 'agent_started', 'agent_exited'] as const;

/** What an editor client does to draw its board. */
async function getDashboardData(base: string, token: string): Promise<Static<typeof DashboardData>> {
  const r = await fetch(`${base}/dashboard/data`, { headers: { authorization: `Bearer ${token}` } });
  if (!r.ok) throw new Error(`dashboard: ${r.status}`);
  const body: unknown = await r.json();
  const errors = [...Value.Errors(DashboardData, body)].map((e) => `${e.path}: ${e.message}`);
  if (errors.length) throw new Error(`dashboard shape: ${errors.slice(0, 5).join('; ')}`);
  return body as Static<typeof DashboardData>;
}

/** What an editor client does to stay current: one callback per board event, parsed. */
function subscribeToEvents(base: string, token: string, onEvent: (name: string, data: Static<typeof BoardEventData>) => void, onBad: (why: string) => void): () => void {
  const es = new EventSource(`${base}/events`, { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }) });
  for (const name of EVENTS) {
    es.addEventListener(name, (ev) => {
      let data: unknown;
      try { data = JSON.parse(ev.data); } catch { onBad(`${name}: not JSON`); return; }
      if (!Value.Check(BoardEventData, data)) onBad(`${name}: ${[...Value.Errors(BoardEventData, data)].map((e) => `${e.path} ${e.message}`).join('; ')}`);
      else onEvent(name, data);
    });
  }
  return () => es.close();
}

const T = suite('observe: editor clients parse /dashboard/data and /events');
let repo: TempRepo;
let s: RunningServer;
T.before(async () => {
  repo = makeRepo('svc-clients-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
T.after(async () => { await s?.stop(); repo?.cleanup(); });

T('getDashboardData and subscribeToEvents work unchanged against svc', async () => {
  const a = (await s.api('POST', '/tasks', { title: 'client one', owned_files: ['src/a.ts'] })).body;
  await s.api('POST', `/tasks/${a.id}/claim`, { claimed_by_session: 'backend-1234abcd' });
  await s.api('POST', `/tasks/${a.id}/progress`, { percent: 25 });
  const d = await getDashboardData(s.url, s.token);
  assert.equal([d.stats.total, d.tasks[0]!.id, d.tasks[0]!.progress, d.tasks[0]!.owned_files], [1, a.id, 25, ['src/a.ts']]);

  const got: [string, Static<typeof BoardEventData>][] = [];
  const bad: string[] = [];
  const stop = subscribeToEvents(s.url, s.token, (n, data) => got.push([n, data]), (why) => bad.push(why));
  try {
    await new Promise((r) => setTimeout(r, 300));
    const b = (await s.api('POST', '/tasks', { title: 'client two' })).body;
    await s.api('POST', `/tasks/${b.id}/claim`, {});
    await s.api('POST', `/tasks/${b.id}/complete`, { result_summary: 'done' });
    for (let i = 0; i < 100 && got.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
  } finally {
    stop();
  }
  assert.equal(bad, []);
  assert.equal(got.map(([n, d]) => [n, d.status, d.version]), [['task_created', 'open', 1], ['task_updated', 'claimed', 2], ['task_updated', 'done', 3]]);
});

T.run();
