// End to end: a tracker delivery becomes a task that the fake agent claims, completes, and whose work is merged.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { delivery, send } from '../webhooks/support.ts';
import { fake, writeFakeAgentConfig } from './fake-config.ts';

const T = suite('e2e: tracker delivery to merged work');
let repo: TempRepo;
let server: RunningServer | undefined;
T.after.each(async () => { await server?.stop(); server = undefined; repo.cleanup(); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

T('a github-style issue delivery → one task → claimed and completed by the agent → merged into main and closed', async () => {
  repo = makeRepo('svc-e2e-hooks-');
  writeFakeAgentConfig(repo.dir, 'trackers:\n  github:\n    webhook: { enabled: true, secret_env: GH_SECRET }');
  server = await startServer(repo.dir, { args: ['--max-agents', '1'], env: { GH_SECRET: 'gh-secret' } });
  const s = server;
  const d = delivery('tracker_b/issues-opened.json');
  const payload = JSON.parse(d.raw.toString('utf8'));
  payload.issue.body = fake('edit file=out/ticket.txt content=fixed from the ticket', 'commit message=ticket work', 'complete summary=fixed from the ticket');
  const r = await send(s.url, delivery('tracker_b/issues-opened.json', { raw: Buffer.from(JSON.stringify(payload)) }));
  assert.equal([r.status, r.body.status, r.body.outcome], [200, 'accepted', 'created']);
  const id = r.body.task_id as string;
  const seen = new Set<string>();
  let task: any;
  for (let i = 0; i < 600; i++) {
    task = (await s.api('GET', `/tasks/${id}`)).body;
    seen.add(task.status);
    if (task.status === 'closed') break;
    await sleep(50);
  }
  assert.is(task.status, 'closed', JSON.stringify(task));
  assert.ok(seen.size >= 2, `went through ${[...seen].join(', ')}`);
  assert.equal([task.result_summary, task.metadata.ticket], ['fixed from the ticket', { adapter: 'tracker_b', id: '2001', url: 'https://github.com/octo/app/issues/7' }]);
  assert.match(task.assigned_agent ?? '', /.+/);
  assert.is(repo.git('show', 'main:out/ticket.txt'), 'fixed from the ticket');
  // The ticket closing upstream afterwards changes nothing: the work is done.
  const closed = await send(s.url, delivery('tracker_b/issues-closed.json'));
  assert.equal([closed.body.status, closed.body.outcome, (await s.api('GET', `/tasks/${id}`)).body.status], ['accepted', 'noted', 'closed']);
});

T.run();
