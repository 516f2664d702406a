import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { didYouMean } from '../../src/cli/suggest.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { runCli } from '../helpers/server.ts';

// The CLI's own words: help, typos and exit codes, without a server (the children run side by side).
const U = suite('svc usage: help, typos, exit codes');
let tmp: { dir: string; cleanup(): void };
U.before(() => { tmp = makeTempDir('svc-usage-'); });
U.after(() => tmp.cleanup());

// FORCE_COLOR and no NO_COLOR: colour is what a library would print to a pipe if it only looked at the env.
const svc = (...args: string[]) => runCli(args, { cwd: tmp.dir, env: { NO_COLOR: '', FORCE_COLOR: '1' } });
const ANSI = /\u001b\[/;

U('unknown commands and flags exit 2 and name the closest one; no unclosed quotes', async () => {
  const [cmd, sub, flag, short] = await Promise.all([svc('tsak', 'list'), svc('task', 'creat', 'x'), svc('task', 'list', '--stauts', 'open'), svc('task', 'list', '-z')]);
  assert.is(cmd.code, 2);
  assert.is(cmd.stderr, "svc: unknown command 'tsak' (did you mean 'task'?)\nRun 'svc --help' for usage.\n");
  assert.is(sub.code, 2);
  assert.is(sub.stderr, "svc task: unknown command 'creat' (did you mean 'create'?)\nRun 'svc task --help' for usage.\n");
  assert.is(flag.code, 2);
  assert.is(flag.stderr, "svc task list: unknown flag --stauts (did you mean '--status'?)\nRun 'svc task list --help' for usage.\n");
  assert.is(short.code, 2);
  assert.match(short.stderr, /^svc task list: unknown flag -z\n/);
  for (const r of [cmd, sub, flag, short]) assert.is((r.stderr.match(/'/g) ?? []).length % 2, 0, `balanced quotes: ${r.stderr}`);
});

U('help names the command once, flags in words, and prints no colour codes into a pipe', async () => {
  const [create, root, task, up] = await Promise.all([svc('task', 'create', '--help'), svc('--help'), svc('task', '--help'), svc('up', '--help')]);
  for (const r of [create, root, task, up]) {
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stdout, ANSI, 'no ANSI codes when stdout is not a terminal');
  }
  assert.match(create.stdout, /^Create a task \(svc task create v\d/);
  assert.match(create.stdout, /USAGE svc task create \[OPTIONS\] <TITLE>/);
  assert.not.match(create.stdout, /task task/);
  assert.match(create.stdout, /--depends-on=<ids>\s+Comma-separated ids of tasks that must finish first/);
  assert.not.match(create.stdout, /<depends_on>|result_summary|claimed_by_session/);
  for (const c of ['up', 'task', 'agents', 'logs', 'kill', 'token', 'tenant']) assert.match(root.stdout, new RegExp(`\\n\\s+${c}\\s`), `svc --help lists ${c}`);
  for (const c of ['list', 'search', 'graph', 'close']) assert.match(task.stdout, new RegExp(`\\n\\s+${c}\\s`), `svc task --help lists ${c}`);
  assert.match(up.stdout, /--port=<port>/);
});

U('a group without a command prints its help to stderr and exits 2; --version prints the version', async () => {
  const [bare, version] = await Promise.all([svc('task'), svc('--version')]);
  assert.is(bare.code, 2);
  assert.match(bare.stderr, /USAGE svc task/);
  assert.is(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

U('did you mean: typos, swapped letters and prefixes find the word; nonsense finds nothing (pure)', () => {
  const words = ['create', 'list', 'search', 'show', 'graph', 'next', 'claim', 'complete', 'close'];
  assert.is(didYouMean('craete', words), 'create');
  assert.is(didYouMean('lst', words), 'list');
  assert.is(didYouMean('compl', words), 'complete');
  assert.is(didYouMean('xyzzy', words), undefined);
});

U.run();
