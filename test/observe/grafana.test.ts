// Agents at work behind the metrics: a real `svc up` runs the fake agent through gates and merges, then
// every PromQL query of GET /grafana/dashboard is parsed (the Prometheus project's own grammar) and each
// metric it names must have samples in a real scrape of /metrics. Also: the agent's TRACEPARENT, the
// session's trace id, agent events on /events and the agent export.
import { parser } from '@prometheus-io/lezer-promql';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { openEvents, type SseClient } from '../helpers/sse-client.ts';
import { fake, writeFakeAgentConfig } from '../e2e/fake-config.ts';

const T = suite('observe: agents at work, the Grafana queries against a real scrape, trace context');
let repo: TempRepo;
let s: RunningServer;
let events: SseClient;
T.before(async () => {
  repo = makeRepo('svc-grafana-');
  // The gate fails in a worktree where the agent left `fail-gate`; no reopen, so that task fails.
  writeFakeAgentConfig(repo.dir, 'gates:\n  - name: unit\n    command: "test ! -f fail-gate"\njanitor:\n  max_reopens: 0\n');
  s = await startServer(repo.dir, { args: ['--max-agents', '2'] });
  const { seq } = (await s.api('GET', '/dashboard/data')).body;
  events = await openEvents(`${s.url}/events`, { authorization: `Bearer ${s.token}`, 'last-event-id': String(seq) });
});
T.after(async () => { events?.close(); await s?.stop(); repo?.cleanup(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, get: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    const v = await get();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${what}:\n${s.output().slice(-3000)}`);
}
const statusOf = async (id: string) => (await s.api('GET', `/tasks/${id}`)).body.status as string;

/** Metric names a PromQL expression selects (Identifier nodes of its vector selectors); throws on a syntax error. */
function metricNames(expr: string): string[] {
  const names: string[] = [];
  const c = parser.parse(expr).cursor();
  do {
    if (c.type.isError) throw new Error(`PromQL does not parse at ${c.from}: ${expr}`);
    if (c.type.name === 'Identifier' && c.node.parent?.type.name === 'VectorSelector') names.push(expr.slice(c.from, c.to));
  } while (c.next());
  return names;
}

T('the fake agent works two tasks: one merged and closed, one failed by its gate; each run carries its TRACEPARENT', async () => {
  const good = (await s.api('POST', '/tasks', { title: 'merged work', description: fake('env', 'edit file=good.txt content=ok', 'commit', 'progress percent=80', 'complete') })).body;
  const bad = (await s.api('POST', '/tasks', { title: 'gate fails', role: 'qa', description: fake('edit file=fail-gate content=x', 'commit', 'complete') })).body;
  await until('the good task closed', async () => ((await statusOf(good.id)) === 'closed' ? true : undefined));
  await until('the bad task failed', async () => ((await statusOf(bad.id)) === 'failed' ? true : undefined));

  const started = await events.next((f) => f.event === 'agent_started' && JSON.parse(f.data).task_id === good.id);
  const data = JSON.parse(started.data);
  assert.match(data.trace_id, /^[0-9a-f]{32}$/);
  assert.equal([data.status, typeof data.version], ['running', 'number']);
  const exited = await events.next((f) => f.event === 'agent_exited' && JSON.parse(f.data).task_id === good.id);
  assert.is(JSON.parse(exited.data).outcome, 'succeeded');
  const log = (await s.api('GET', `/agents/${data.id}/logs`)).body.content as string;
  const env = /env TRACEPARENT=(00-([0-9a-f]{32})-([0-9a-f]{16})-01)/.exec(log);
  assert.ok(env, `the agent saw TRACEPARENT:\n${log}`);
  assert.is(env![2], data.trace_id, 'the agent joins the trace named in its session record');

  await events.next((f) => f.event === 'agent_exited' && JSON.parse(f.data).task_id === bad.id);
  const rows = String((await s.api('POST', '/export/agents', { format: 'jsonl' })).body).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.map((r) => [r.task_id, r.outcome]).sort(), [[bad.id, 'failed'], [good.id, 'succeeded']].sort());
});

T('every PromQL query of the Grafana dashboard names metrics that a real scrape of /metrics has samples of', async () => {
  await s.settled();
  const scrape = String((await s.api('GET', '/metrics')).body);
  const sampled = new Set([...scrape.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? \S+$/gm)].map((m) => m[1]!));
  const board = (await s.api('GET', '/grafana/dashboard')).body.dashboard;
  const queries: string[] = board.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));
  assert.ok(queries.length >= 16, `${queries.length} queries`);
  const missing: string[] = [];
  for (const q of queries) {
    const names = metricNames(q.replaceAll('$role', '.*'));
    assert.ok(names.length > 0, `a query that names no metric: ${q}`);
    for (const n of names) if (!sampled.has(n)) missing.push(`${n} (in ${q})`);
  }
  assert.equal(missing, [], 'every metric a panel queries is exported and has samples');
  const variable = board.templating.list.find((v: { name: string }) => v.name === 'role');
  const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(variable.query.query)!;
  assert.match(scrape, new RegExp(`^${metric}\\{[^}]*${label}="backend"`, 'm'), 'the role variable has values');
  for (const line of [/^svc_merges_total\{outcome="merged"\} 1$/m, /^svc_gate_runs_total\{result="fail"\} 1$/m, /^svc_agent_runs_total\{adapter="generic",model="",outcome="succeeded"\} 1$/m, /^svc_task_transitions_total\{from="done",to="closed"\} 1$/m])
    assert.match(scrape, line);
});

T.run();
