// `svc site` as a real child process: flags, environment, its data folder, usage errors, shutdown.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../../src/cli/args.ts';
import type { Values } from '../../src/cli/command.ts';
import { siteOptions } from '../../src/cli/site.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { isCommitted } from '../../src/store/layout.ts';
import { startFakeOpenAI } from '../helpers/fake-openai.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { runCli, svcArgv } from '../helpers/server.ts';
import { call, POSTS, sseEvents } from '../helpers/site.ts';

const C = suite('svc site');

async function waitFor(file: string, child: ReturnType<typeof spawn>, out: () => string): Promise<any> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc site exited ${child.exitCode}:\n${out()}`);
    if (existsSync(file)) {
      try { const j = JSON.parse(readFileSync(file, 'utf8')); if (j.pid === child.pid) return j; } catch { /* being written */ }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`svc site did not start:\n${out()}`);
}

C('svc site serves its API from .sdd/site by default, with the model from the environment, and stops on SIGTERM', async () => {
  const tmp = makeTempDir('svc-site-cli-');
  const fake = await startFakeOpenAI({ text: 'Agents use worktrees [1].' });
  mkdirSync(join(tmp.dir, 'posts'));
  writeFileSync(join(tmp.dir, 'posts', 'worktrees.md'), POSTS['worktrees.md']!);
  const child = spawn(process.execPath, svcArgv('site', '--port', '0', '--content', 'posts', '--trust-proxy', '127.0.0.254,10.0.0.0/8'), {
    cwd: tmp.dir, env: { ...process.env, NO_COLOR: '1', SERVICE_SITE_MODEL_URL: fake.url, SERVICE_SITE_MODEL: 'fake-1', SERVICE_SITE_SHA: 'deadbeef' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  try {
    const info = await waitFor(join(tmp.dir, '.sdd', 'site', 'site.json'), child, () => out);
    assert.match(out, /svc site listening on http:\/\/127\.0\.0\.1:\d+ .*1 posts/);
    assert.not.match(out, /upstream model not configured/);
    assert.equal((await call(info.url, '/api/health')).json().sha, 'deadbeef');
    assert.equal((await call(info.url, '/api/notify', { body: { email: 'cli@example.org' } })).json(), { ok: true, status: 'noop' });
    assert.ok(existsSync(join(tmp.dir, '.sdd', 'site', 'subscribers.jsonl')));
    assert.is(readFileSync(join(tmp.dir, '.sdd', 'site', '.gitignore'), 'utf8'), '*\n', 'git ignores the whole data folder');
    const events = sseEvents((await call(info.url, '/api/ask', { body: { query: 'worktrees' } })).text);
    assert.equal(events.map((e) => e.event).slice(-1), ['citations']);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    assert.is(code, 0);
    assert.not.ok(existsSync(join(tmp.dir, '.sdd', 'site', 'site.json')), 'site.json removed at shutdown');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await fake.close();
    tmp.cleanup();
  }
});

C('bad flags and environment are usage errors; the command exits 2', async () => {
  const tmp = makeTempDir('svc-site-cli-');
  try {
    const cases: [Values, Record<string, string>, RegExp][] = [
      [{ 'trust-proxy': 'proxy.internal' }, {}, /--trust-proxy: .*not an IP address or CIDR/],
      [{ content: join(tmp.dir, 'missing-dir') }, {}, /is not a folder/],
      [{ port: '99999' }, {}, /--port must be between/],
      [{ 'assistant-limit': '0' }, {}, /--assistant-limit must be between/],
      [{}, { SERVICE_SITE_MODEL_URL: 'ftp://x' }, /SERVICE_SITE_MODEL_URL must be an http\(s\) URL/],
      [{ origin: 'not a url' }, {}, /--origin must be an http\(s\) URL/],
      [{}, { SERVICE_SITE_SMTP_URL: 'smtp://127.0.0.1:2525' }, /SERVICE_SITE_MAIL_FROM is required/],
    ];
    for (const [values, env, message] of cases) {
      assert.throws(() => siteOptions({ workdir: tmp.dir, ...values }, env, silentLogger()), (e: Error) => e instanceof UsageError && message.test(e.message), JSON.stringify([values, env]));
    }
    const o = siteOptions({ workdir: tmp.dir }, { SERVICE_SITE_ASSISTANT_LIMIT: '7', SERVICE_INDEXNOW_ENDPOINT: 'http://a/indexnow, http://b/indexnow', NODE_ENV: 'production' }, silentLogger());
    assert.equal([o.host, o.port, o.dataDir, o.assistant, o.indexnow.endpoints, o.indexnow.production],
      ['127.0.0.1', 8053, join(tmp.dir, '.sdd', 'site'), { limit: 7, windowMs: 3_600_000 }, ['http://a/indexnow', 'http://b/indexnow'], true]);
    const r = await runCli(['site', '--port', '0', '--trust-proxy', '10.0.0.0/33'], { cwd: tmp.dir });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /svc site: --trust-proxy/);
  } finally {
    tmp.cleanup();
  }
});

C('the site data folder is never committed to refs/sdd/state', () => {
  assert.not.ok(isCommitted('site/subscribers.jsonl'));
  assert.not.ok(isCommitted('site/summaries/abc.quick.json'));
  assert.ok(isCommitted('tasks/ab/01jcab.json'));
});

C.run();
