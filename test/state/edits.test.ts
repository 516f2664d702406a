import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer, type RunningServer } from '../helpers/server.ts';

// config.yaml and tenants.json edited while the server runs reach refs/sdd/state without a restart.
const T = suite('edits of config.yaml and tenants.json');
let repo: TempRepo;
let s: RunningServer;
T.before(async () => {
  repo = makeRepo('svc-edits-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
});
T.after(async () => {
  await s?.stop();
  repo?.cleanup();
});

const committed = async (path: string, pattern: RegExp, timeoutMs = 30_000) => {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const text = repo.git('show', `refs/sdd/state:.sdd/${path}`);
    if (pattern.test(text)) return repo.git('log', '-1', '--format=%s', 'refs/sdd/state', '--', `.sdd/${path}`);
  }
  throw new Error(`${path} never reached refs/sdd/state matching ${pattern}`);
};

T('a hand edit of config.yaml is committed as "edit config.yaml" while the server runs', async () => {
  appendFileSync(join(repo.dir, '.sdd', 'config.yaml'), '\n# reviewed by the team\n');
  assert.is(await committed('config.yaml', /reviewed by the team/), 'edit config.yaml');
});

T('svc tenant add while the server runs is committed', async () => {
  const r = await runCli(['tenant', 'add', 'acme'], { cwd: repo.dir });
  assert.is(r.code, 0, r.stderr);
  assert.is(await committed('tenants.json', /acme/), 'edit tenants.json');
});

T.run();
