// README's path into a user's repository, for real: `npm pack` this checkout, install the tarball into a temp
// prefix (from the local npm cache), `svc up` in a fresh repository, and an agent reports with `svc task complete`.
// The slow test of the suite (~30-60 s: the pack builds dist/); it also checks that the install reports nothing.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, makeTempDir } from '../helpers/repo.ts';
import { PROJECT } from '../helpers/server.ts';

const T = suite('e2e: npm pack, install into a prefix, svc up in any repository');
const pkg = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { name: string; version: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The child's environment without what `npm test` or a developer's shell would leak into npm or svc.
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|SERVICE_|INIT_CWD$)/i.test(k)));
  return { ...env, NO_COLOR: '1', ...extra };
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? cleanEnv(), timeout: opts.timeoutMs ?? 180_000, maxBuffer: 64 << 20 }, (e, out, err) => {
      done({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: String(out), err: String(err) });
    });
  });
}

/** The commands of README's "Use it in your repository" block, comments removed. */
function readmeSteps(): string[] {
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  const block = /## Use it in your repository\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  return block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

T('README: the two set-up commands first, then five lines that install the packed tarball and use svc in a repository', () => {
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  const first = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  assert.equal(first.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean), ['npm install && npm start', 'npm install && npm test']);
  assert.equal(readmeSteps(), [
    `npm pack && npm install -g ./${pkg.name}-${pkg.version}.tgz`,
    'cd ~/src/my-repo',
    'svc up',
    'svc task create "Add a health check" --description "GET /health answers 200"',
    'svc task list --all',
  ]);
  assert.not.match(readme, /\.\.\/shared/);
  assert.not.match(readme, /npx svc|export SERVICE_AUTH_TOKEN/);
});

T('the packed tarball installs into a prefix without telemetry; svc up serves a fresh repository; its agent runs svc task complete', async () => {
  const work = makeTempDir('svc-pack-');
  const repo = makeRepo('svc-user-repo-');
  const scarf: string[] = [];
  const recorder = createServer((req, res) => { scarf.push(`${req.method} ${req.url}`); res.end('ok'); });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
  let up: ChildProcess | undefined;
  try {
    // Step 1 of README: npm pack (its prepare script builds dist/), then install the tarball.
    const packed = await run('npm', ['pack', '--pack-destination', work.dir, '--json'], { cwd: PROJECT });
    assert.is(packed.code, 0, packed.err);
    const info = JSON.parse(packed.out)[0] as { filename: string; files: { path: string }[] };
    assert.is(info.filename, `${pkg.name}-${pkg.version}.tgz`);
    const files = info.files.map((f) => f.path);
    for (const f of ['dist/cli/main.js', 'dist/server/docs.js', '.sdd-template/config.yaml', '.sdd-template/gitignore', 'README.md', 'docs/configuration.md']) assert.ok(files.includes(f), `tarball has ${f}`);
    assert.not.ok(files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'no sources or tests in the tarball');
    const prefix = join(work.dir, 'prefix');
    const scarfPort = String((recorder.address() as { port: number }).port);
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, join(work.dir, info.filename), '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'], {
      cwd: work.dir, env: cleanEnv({ SCARF_LOCAL_PORT: scarfPort, SCARF_VERBOSE: 'true' }),
    });
    assert.is(installed.code, 0, installed.err);
    // swagger-ui-dist's @scarf/scarf postinstall ran and stood down because of scarfSettings in our package.json.
    await sleep(200);
    assert.equal(scarf, [], 'no install report reached the telemetry endpoint');
    assert.match(installed.out + installed.err, /Scarf has been disabled via a package\.json in the dependency chain/);
    const svc = join(prefix, 'bin', 'svc');
    assert.ok(existsSync(svc), 'bin svc installed');

    // Steps 2-5 in a fresh repository. PATH does not hold the prefix: the agent finds svc only through svc up.
    const fakeAgent = join(prefix, 'lib', 'node_modules', pkg.name, 'fixtures', 'fake-agent.mjs');
    mkdirSync(join(repo.dir, '.sdd'), { recursive: true });
    writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), `orchestrator:\n  tick_ms: 200\nagents:\n  default: generic\n  generic:\n    command: "node ${fakeAgent} --prompt-file {prompt_file}"\n`);
    let log = '';
    up = spawn(svc, ['up', '--port', '0'], { cwd: repo.dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    up.stdout!.on('data', (d) => (log += d));
    up.stderr!.on('data', (d) => (log += d));
    for (let i = 0; i < 300 && !/svc listening on/.test(log); i++) await sleep(50);
    assert.match(log, /svc listening on http:\/\/127\.0\.0\.1:\d+/, log);
    assert.match(log, /admin token in .*\.sdd\/secrets\/admin\.token/);
    const created = await run(svc, ['task', 'create', 'Add a health check', '--description', 'FAKE: svc-complete summary=reported through svc on the agent PATH', '--json'], { cwd: repo.dir });
    assert.is(created.code, 0, created.err);
    const id = (JSON.parse(created.out) as { id: string }).id;
    let shown = '';
    for (let i = 0; i < 300 && !/"status": "closed"/.test(shown); i++) {
      await sleep(100);
      shown = (await run(svc, ['task', 'show', id, '--json'], { cwd: repo.dir })).out;
    }
    assert.match(shown, /"status": "closed"/, `${shown}\n${log}`);
    assert.match(shown, /"result_summary": "reported through svc on the agent PATH"/);
    const listed = await run(svc, ['task', 'list', '--all'], { cwd: repo.dir });
    assert.match(listed.out, new RegExp(`${id}\\s+closed\\s+backend\\s+2\\s+Add a health check`));
    // The board's files ship in the package; the SBOM describes the installed tree of the global install.
    const base = /svc listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)![1]!;
    const board = await fetch(`${base}/board/app.js`);
    assert.is(board.status, 200, 'board/ is in the tarball');
    const token = readFileSync(join(repo.dir, '.sdd', 'secrets', 'admin.token'), 'utf8').trim();
    const bom = await (await fetch(`${base}/sbom`, { headers: { authorization: `Bearer ${token}` } })).json() as { metadata: { component: { name: string } }; components: { name: string }[] };
    assert.is(bom.metadata.component.name, pkg.name);
    assert.ok(bom.components.some((c) => c.name === 'jose') && !bom.components.some((c) => c.name === 'uvu'), 'runtime dependencies only');
  } finally {
    up?.kill('SIGTERM');
    if (up && up.exitCode === null) await new Promise((r) => up!.once('exit', r));
    recorder.close();
    repo.cleanup();
    work.cleanup();
  }
});

T.run();
