// Device-code login end to end: `svc login` in a child process, a signed-in user approves the code,
// the CLI then works with the stored token; polling too fast gets slow_down; `svc logout` revokes it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, svcArgv } from '../helpers/server.ts';
import { sessionFor, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';

const test = suite('svc login');
let w: SsoWorld;
let home: string;
let env: Record<string, string>;
test.before(async () => {
  w = await startSsoWorld({ saml: false });
  home = mkdtempSync(join(tmpdir(), 'svc-home-'));
  env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), SERVICE_AUTH_TOKEN: '', SERVICE_SERVER_URL: '' };
});
test.after(async () => { await w.stop(); rmSync(home, { recursive: true, force: true }); });

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(w.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null), headers: r.headers };
};
const credFile = () => join(home, '.config', 'svc', 'credentials.json');

test('svc login: the code is approved by alice in her browser session, then svc task works with the stored token', async () => {
  const alice = await sessionFor(w, 'alice');
  const child = spawn(process.execPath, svcArgv('login', '--server', w.url), { cwd: home, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.on('close', r));
  const until = Date.now() + 30_000;
  while (!/code: ([A-Z]{4}-[A-Z]{4})/.test(out) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const code = /code: ([A-Z]{4}-[A-Z]{4})/.exec(out)?.[1];
  assert.ok(code, out);
  assert.match(out, `${w.url}/auth/device`);
  const ok = await post('/auth/cli/authorize', { user_code: code!.toLowerCase().replace('-', ' ') }, { cookie: `svc_session=${alice}` });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body.user_code, code);
  assert.is(await exit, 0, out);
  assert.match(out, 'Logged in to');
  assert.match(out, 'alice@example.test');
  assert.is(statSync(credFile()).mode & 0o777, 0o600);
  const stored = JSON.parse(readFileSync(credFile(), 'utf8')).servers[w.url];
  assert.ok(stored.access_token);

  await w.svc.api('POST', '/tasks', { title: 'seen through the stored token' });
  const list = await runCli(['task', 'list', '--server', w.url, '--json'], { cwd: home, env });
  assert.is(list.code, 0, list.stderr);
  assert.ok(JSON.parse(list.stdout).tasks.some((t: { title: string }) => t.title === 'seen through the stored token'));
  const created = await runCli(['task', 'create', 'made by alice', '--server', w.url, '--json'], { cwd: home, env });
  assert.is(created.code, 0, created.stderr);

  const logout = await runCli(['logout', '--server', w.url], { cwd: home, env });
  assert.is(logout.code, 0, logout.stderr);
  assert.match(logout.stdout, 'session revoked');
  assert.not.ok(JSON.parse(readFileSync(credFile(), 'utf8')).servers[w.url], 'the token is forgotten');
  const after = await fetch(`${w.url}/tasks?limit=1`, { headers: { authorization: `Bearer ${stored.access_token}` } });
  assert.is(after.status, 401, 'the revoked token no longer works');
});

test('polling faster than the interval → slow_down with a longer interval; a redeemed code is single use', async () => {
  const dc = (await post('/auth/cli/device', { client_name: 'test' })).body;
  assert.match(dc.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  assert.is(dc.expires_in, 600);
  assert.is(dc.interval, 5);
  assert.is((await post('/auth/cli/token', { device_code: dc.device_code })).body.status, 'pending');
  const fast = (await post('/auth/cli/token', { device_code: dc.device_code })).body;
  assert.is(fast.status, 'slow_down');
  assert.is(fast.interval, 10);
  assert.is((await post('/auth/cli/token', { device_code: 'never-issued' })).body.status, 'expired');
});

test('code entry: a token without a user session → 401; wrong codes → 400, then 429 after ten', async () => {
  const dc = (await post('/auth/cli/device', {})).body;
  const byToken = await post('/auth/cli/authorize', { user_code: dc.user_code }, { authorization: `Bearer ${w.svc.token}` });
  assert.is(byToken.status, 401);
  const bob = await sessionFor(w, 'bob');
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) statuses.push((await post('/auth/cli/authorize', { user_code: 'BBBB-BBBB' }, { authorization: `Bearer ${bob}` })).status);
  assert.equal(statuses.slice(0, 10), Array(10).fill(400));
  assert.is(statuses[10], 429);
  assert.ok(!existsSync(join(home, 'nothing')));
});

test.run();
