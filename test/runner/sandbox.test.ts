// The bubblewrap sandbox of agents and gates: decisions (pure) and a real bwrap run over a temp repository.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addWorktree, decideSandbox, resolveSandbox, sandboxArgv, sandboxWrapper, type SandboxState } from '../../src/runner/index.ts';
import { parseConfig } from '../../src/config/index.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const P = suite('sandbox decisions (pure)');

P('auto uses bwrap when it starts, else runs unsandboxed and says why; bwrap never falls back; none is none', () => {
  assert.equal(decideSandbox('auto', '/usr/bin/bwrap', null), { mode: 'bwrap', reason: 'bubblewrap (/usr/bin/bwrap)', bwrap: '/usr/bin/bwrap' });
  assert.equal(decideSandbox('auto', null, null).mode, 'none');
  assert.match(decideSandbox('auto', null, null).reason, /not on PATH/);
  assert.equal(decideSandbox('auto', '/b', 'no user namespaces').mode, 'none');
  assert.equal(decideSandbox('bwrap', '/b', 'no user namespaces'), { mode: 'unavailable', reason: 'agents.sandbox is bwrap but no user namespaces', bwrap: null });
  assert.equal(decideSandbox('none', '/b', null).mode, 'none');
});

P('mount order: .sdd hidden first, then the git dir read-only, then what the agent writes, then its worktree', () => {
  const argv = sandboxArgv({ bwrap: 'bwrap', sdd: '/r/.sdd', commonDir: '/r/.git', worktree: '/r/.sdd/worktrees/s', adminDir: '/r/.git/worktrees/s', readFiles: ['/r/.sdd/runtime/prompts/s.md'] }, ['agent', '--x']);
  const at = (...seq: string[]) => argv.findIndex((_, i) => seq.every((s, j) => argv[i + j] === s));
  assert.ok(at('--tmpfs', '/r/.sdd') < at('--ro-bind', '/r/.git', '/r/.git'));
  assert.ok(at('--ro-bind', '/r/.git', '/r/.git') < at('--bind', '/r/.git/objects', '/r/.git/objects'));
  assert.ok(at('--bind', '/r/.git/objects', '/r/.git/objects') < at('--ro-bind', '/r/.git/objects/pack', '/r/.git/objects/pack'));
  assert.ok(at('--bind', '/r/.git/worktrees/s', '/r/.git/worktrees/s') < at('--ro-bind', '/r/.git/worktrees/s/config.worktree', '/r/.git/worktrees/s/config.worktree'));
  assert.ok(at('--bind', '/r/.sdd/worktrees/s', '/r/.sdd/worktrees/s') > at('--tmpfs', '/r/.sdd'));
  assert.ok(at('--ro-bind', '/r/.sdd/runtime/prompts/s.md', '/r/.sdd/runtime/prompts/s.md') > 0);
  for (const f of ['--die-with-parent', '--unshare-pid']) assert.ok(argv.includes(f), f);
  assert.equal(argv.slice(-3), ['--', 'agent', '--x']);
});

const R = suite('sandbox (real bubblewrap)');
let repo: TempRepo;
let state: SandboxState;
R.before(async () => {
  state = await resolveSandbox('bwrap', process.env.PATH ?? '');
  // CI installs bubblewrap (.ci/run); a machine without it says so instead of passing silently.
  if (state.mode !== 'bwrap' && !process.env.SVC_TEST_NO_BWRAP) throw new Error(`bubblewrap is needed for this suite: ${state.reason}`);
});
R.before.each(() => { repo = makeRepo('svc-sandbox-'); });
R.after.each(() => repo.cleanup());

const run = (argv: string[], cwd: string) => new Promise<{ code: number; out: string }>((resolve) => {
  execFile(argv[0]!, argv.slice(1), { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/root' } }, (err, stdout, stderr) => {
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr });
  });
});

R('inside: its worktree and branch are writable; secrets, other worktrees, git config and the rest of the disk are not', async () => {
  if (state.mode !== 'bwrap') return;
  const layout = sddLayout(repo.dir);
  const git = createGit(repo.dir);
  mkdirSync(layout.secrets, { recursive: true });
  writeFileSync(layout.adminToken, 'admin-secret\n');
  const wt = (await addWorktree({ git, layout }, 'backend-00000001', 'main')).path;
  const other = (await addWorktree({ git, layout }, 'backend-00000002', 'main')).path;
  const prompt = join(layout.runtime, 'prompts', 'p.md');
  mkdirSync(join(layout.runtime, 'prompts'), { recursive: true });
  writeFileSync(prompt, 'the prompt\n');
  const config = parseConfig({});
  const wrap = await sandboxWrapper({ sandbox: state, git, layout, config, env: {} }, wt, [prompt]);
  const script = [
    'set -u',
    'cat ../../secrets/admin.token && echo READ-SECRET',
    `cat ${layout.adminToken} && echo READ-SECRET-ABS`,
    `ls ${other} 2>/dev/null | grep -q README && echo SAW-OTHER-WORKTREE`,
    `cat ${prompt}`,
    'echo work > work.txt && git add work.txt && git -c user.name=a -c user.email=a@b commit -q -m work && echo COMMITTED',
    `git config core.fsmonitor /bin/false 2>/dev/null && echo PLANTED-CONFIG`,
    `echo x > ${join(repo.dir, '.git', 'hooks', 'post-merge')} 2>/dev/null && echo PLANTED-HOOK`,
    `git update-ref refs/heads/main HEAD 2>/dev/null && echo MOVED-MAIN`,
    `echo x > ${join(repo.dir, 'README.md')} 2>/dev/null`,
    'echo x > /etc/svc-sandbox-test 2>/dev/null && echo WROTE-ETC',
    'echo x > /tmp/svc-private && echo TMP-OK',
    'echo PIDS $(ls /proc | grep -c "^[0-9]")',
  ].join('\n');
  const r = await run(wrap(['/bin/sh', '-c', script]), wt);
  for (const bad of ['READ-SECRET', 'SAW-OTHER-WORKTREE', 'PLANTED-CONFIG', 'PLANTED-HOOK', 'MOVED-MAIN', 'WROTE-ETC']) {
    assert.not.ok(r.out.includes(bad), `${bad}:\n${r.out}`);
  }
  for (const good of ['the prompt', 'COMMITTED', 'TMP-OK']) assert.ok(r.out.includes(good), `${good}:\n${r.out}`);
  assert.ok(Number(/PIDS (\d+)/.exec(r.out)?.[1]) < 10, `own PID namespace: ${r.out}`);
  assert.is(repo.git('log', '-1', '--format=%s', 'agent/backend-00000001'), 'work', 'the commit landed on its branch');
  assert.not.ok(existsSync('/tmp/svc-private'), 'its /tmp is private');
  assert.is(readFileSync(layout.adminToken, 'utf8'), 'admin-secret\n');
  // The repository sits in /tmp here, so the write landed in the sandbox's private /tmp, never on the checkout.
  assert.is(readFileSync(join(repo.dir, 'README.md'), 'utf8'), '# temp repo\n');
  assert.not.match(readFileSync(join(repo.dir, '.git', 'config'), 'utf8'), /fsmonitor/);
});

R.run();
P.run();
