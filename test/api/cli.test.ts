import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeTempDir } from '../helpers/repo.ts';
import { runCli } from '../helpers/server.ts';
import { boot, type Api } from './support.ts';

// `svc task …` against a running server, found through SERVICE_SERVER_URL and SERVICE_AUTH_TOKEN.
let a: Api;
let elsewhere: { dir: string; cleanup(): void };
const T = suite('svc task CLI over HTTP');
T.before(async () => { a = await boot(); elsewhere = makeTempDir('svc-cli-'); });
T.after(async () => { await a?.close(); elsewhere?.cleanup(); });

// Run from a folder with no .sdd, so only the environment can point at the server.
const task = (...args: string[]) => runCli(['task', ...args], { cwd: elsewhere.dir, env: { SERVICE_SERVER_URL: a.s.url, SERVICE_AUTH_TOKEN: a.s.token } });
async function json(...args: string[]): Promise<any> {
  const r = await task(...args, '--json');
  assert.is(r.code, 0, `svc task ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
async function text(...args: string[]): Promise<string> {
  const r = await task(...args);
  assert.is(r.code, 0, `svc task ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

T('create, list and show print JSON with --json and a table otherwise', async () => {
  const t = await json('create', 'CLI first', '--role', 'cli', '--priority', '1', '--description', 'from the command line');
  assert.is(t.title, 'CLI first');
  assert.is(t.role, 'cli');
  assert.is(t.priority, 1);
  assert.is((await a.get(t.id)).description, 'from the command line');
  const out = await text('create', 'CLI second', '--role', 'cli', '--depends-on', t.id);
  assert.match(out, /^ID\s+STATUS\s+ROLE\s+PRIORITY\s+TITLE/);
  assert.match(out, /open\s+cli\s+2\s+CLI second/);
  // Independent reads run side by side: each CLI start costs about a second.
  const [page, table, shown, shownText] = await Promise.all([json('list'), text('list', '--status', 'open'), json('show', t.id), text('show', t.id)]);
  assert.is(page.total, 2);
  assert.equal(page.tasks.map((x: any) => x.title), ['CLI second', 'CLI first'], 'newest first');
  assert.match(table, /CLI first/);
  assert.match(table, /\(2 of 2\)/);
  assert.is(shown.id, t.id);
  assert.match(shownText, /status\s+open/);
});

T('next, progress and complete walk a task to done; release and fail; cancel', async () => {
  const claimed = await json('next', 'cli', '--session', 'cli-sess');
  assert.is(claimed.title, 'CLI first', 'lowest priority number first');
  assert.is(claimed.status, 'claimed');
  assert.is(claimed.claimed_by_session, 'cli-sess');
  const prog = await json('progress', claimed.id, '--message', 'halfway', '--percent', '50', '--files-changed', '2', '--tests-passing', '3', '--errors', '0');
  assert.is(prog.status, 'in_progress');
  const p = await a.s.api('GET', `/tasks/${claimed.id}/progress`);
  assert.is(p.body.entries[0].message, 'halfway');
  assert.is(p.body.latest.tests_passing, 3);
  const done = await json('complete', claimed.id, '--summary', 'finished from the CLI');
  assert.is(done.status, 'done');
  assert.is(done.result_summary, 'finished from the CLI');

  const second = await text('next', 'cli');
  assert.match(second, /claimed\s+cli\s+2\s+CLI second/, 'the dependent became claimable');
  const id = (await a.s.api('GET', '/tasks?status=claimed&limit=5')).body.tasks[0].id;
  assert.match(await text('release', id, '--reason', 'handing back'), /open/);
  assert.is((await a.get(id)).status_reason, 'handing back');
  const failed = await json('fail', id, '--reason', 'cannot be done');
  assert.is(failed.status, 'failed');
  assert.is(failed.failure.reason, 'cannot be done');

  const doomed = await json('create', 'CLI doomed');
  const cancelled = await json('cancel', doomed.id, '--reason', 'not needed');
  assert.is(cancelled.status, 'cancelled');
});

T('exit codes: not found 3, usage 2, authentication 4 (naming where a token comes from), cannot reach the server 5', async () => {
  const [missing, none, usage, denied, away, clone] = await Promise.all([
    task('show', '01zzzzzzzzzzzzzzzzzzzzzzzz'), task('next', 'nobody'), task('complete', '01zzzzzzzzzzzzzzzzzzzzzzzz'),
    runCli(['task', 'list'], { cwd: elsewhere.dir, env: { SERVICE_SERVER_URL: a.s.url, SERVICE_AUTH_TOKEN: 'wrong' } }),
    runCli(['task', 'list'], { cwd: elsewhere.dir, env: { SERVICE_SERVER_URL: 'http://127.0.0.1:9', SERVICE_AUTH_TOKEN: 'x' } }),
    runCli(['task', 'list'], { cwd: elsewhere.dir, env: { SERVICE_SERVER_URL: a.s.url, SERVICE_AUTH_TOKEN: '' } }),
  ]);
  assert.is(missing.code, 3);
  assert.match(missing.stderr, /404.*not found/);
  assert.is(none.code, 3, 'task next with nothing to claim');
  assert.match(none.stderr, /No open tasks for role 'nobody'/);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /--summary is required/);
  assert.is(denied.code, 4);
  assert.match(denied.stderr, /401.*\(used SERVICE_AUTH_TOKEN from the environment\)/);
  assert.is(away.code, 5);
  assert.match(away.stderr, /cannot reach svc at http:\/\/127.0.0.1:9/);
  assert.is(clone.code, 4, 'a clone has no secrets');
  assert.match(clone.stderr, /no token: .*\.sdd\/secrets\/admin\.token/);
  assert.not.match(clone.stderr, /\n\s+at /, 'no stack trace');
});

T.run();
