import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildArgv, chooseAdapter, detectAdapters, parseCommandTemplate, planLaunch, substitutePlaceholders, takesMcp, TemplateError } from '../../src/runner/index.ts';
import { parseConfig } from '../../src/config/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const values = {
  prompt_file: '/tmp/p 1.md',
  prompt: 'Fix "it"; rm -rf / $(whoami)',
  model: 'big-model',
  task_id: 'tid',
  session_id: 'backend-0a1b2c3d',
  worktree: '/repo/.sdd/worktrees/backend-0a1b2c3d',
};

const Template = suite('command template');

Template('splits on spaces and keeps quoted words whole', () => {
  assert.equal(parseCommandTemplate(`my-agent  --prompt "a b"  'c "d"' e\\ f --x=""`), ['my-agent', '--prompt', 'a b', 'c "d"', 'e f', '--x=']);
  assert.equal(parseCommandTemplate(`run "say \\"hi\\"" 'it''s'`), ['run', 'say "hi"', 'its']);
});

Template('rejects unterminated quotes and empty templates', () => {
  assert.throws(() => parseCommandTemplate(`agent "oops`), (e: unknown) => e instanceof TemplateError);
  assert.throws(() => parseCommandTemplate(`   `), (e: unknown) => e instanceof TemplateError);
});

Template('a placeholder value with spaces and shell characters stays one argument', () => {
  const argv = substitutePlaceholders(parseCommandTemplate('my-agent --prompt-file {prompt_file} -m {model} --msg={prompt} {unknown}'), values);
  assert.equal(argv, ['my-agent', '--prompt-file', '/tmp/p 1.md', '-m', 'big-model', `--msg=${values.prompt}`, '{unknown}']);
});

Template('generic adapter uses agents.generic.command with every placeholder', () => {
  const argv = buildArgv('generic', { command: 'bot {task_id} {session_id} {worktree}' }, values);
  assert.equal(argv, ['bot', 'tid', 'backend-0a1b2c3d', values.worktree]);
  assert.throws(() => buildArgv('generic', {}, values), /agents\.generic\.command/);
});

const Argv = suite('adapter argv');

Argv('each CLI gets its non-interactive mode and the model', () => {
  assert.equal(buildArgv('claude', {}, values), ['claude', '-p', values.prompt, '--model', 'big-model', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
  assert.equal(buildArgv('codex', {}, values).slice(0, 4), ['codex', 'exec', '--model', 'big-model']);
  assert.equal(buildArgv('gemini', {}, values).slice(0, 3), ['gemini', '-p', values.prompt]);
  assert.equal(buildArgv('qwen', {}, values).slice(0, 3), ['qwen', '-p', values.prompt]);
  assert.equal(buildArgv('opencode', {}, values), ['opencode', 'run', '--model', 'big-model', values.prompt]);
  const aider = buildArgv('aider', {}, values);
  assert.equal(aider.slice(0, 3), ['aider', '--message-file', '/tmp/p 1.md']);
  assert.ok(aider.includes('--yes-always'));
});

Argv('no model anywhere means no --model flag', () => {
  assert.not.ok(buildArgv('claude', {}, { ...values, model: '' }).includes('--model'));
});

Argv('a {model} placeholder with no model drops its flag and argument instead of passing ""', () => {
  const noModel = { ...values, model: '' };
  assert.equal(buildArgv('generic', { command: 'my-agent --prompt-file {prompt_file} --model {model} -v' }, noModel), ['my-agent', '--prompt-file', '/tmp/p 1.md', '-v']);
  assert.equal(buildArgv('generic', { command: 'my-agent --model={model} {prompt_file}' }, noModel), ['my-agent', '/tmp/p 1.md']);
  assert.equal(buildArgv('generic', { command: 'my-agent {model} x' }, noModel), ['my-agent', 'x'], 'a bare positional {model} goes alone');
  assert.equal(buildArgv('generic', { command: 'my-agent --model {model}' }, values), ['my-agent', '--model', 'big-model'], 'a model keeps the pair');
});

Argv('the svc MCP server: claude gets --mcp-config (svc mcp through the shim), codex -c overrides to /mcp; no token in argv', () => {
  const mcp = { svc: '/repo/.sdd/runtime/bin/svc', serverUrl: 'http://127.0.0.1:8052' };
  const claude = buildArgv('claude', {}, values, mcp);
  const config = claude[claude.indexOf('--mcp-config') + 1]!;
  assert.equal(JSON.parse(config), { mcpServers: { svc: { type: 'stdio', command: '/repo/.sdd/runtime/bin/svc', args: ['mcp'] } } });
  assert.equal(claude.slice(0, 3), ['claude', '-p', values.prompt]);
  const codex = buildArgv('codex', {}, values, mcp);
  assert.equal(codex.slice(0, 8), ['codex', 'exec', '--model', 'big-model', '-c', 'mcp_servers.svc.url="http://127.0.0.1:8052/mcp"', '-c', 'mcp_servers.svc.bearer_token_env_var="SERVICE_AUTH_TOKEN"']);
  assert.is(codex[codex.length - 1], values.prompt);
  assert.equal(buildArgv('gemini', {}, values, mcp), buildArgv('gemini', {}, values), 'gemini takes no MCP flag');
  assert.not.ok(buildArgv('claude', {}, values).includes('--mcp-config'), 'agents.mcp false: none');
  // A template names {mcp_config} where it wants it; without MCP the flag before it goes too.
  const template = { command: 'my-agent --prompt-file {prompt_file} --mcp-config {mcp_config} -v' };
  assert.equal(buildArgv('generic', template, values, mcp), ['my-agent', '--prompt-file', '/tmp/p 1.md', '--mcp-config', config, '-v']);
  assert.equal(buildArgv('generic', template, values), ['my-agent', '--prompt-file', '/tmp/p 1.md', '-v']);
  assert.equal([takesMcp('claude', {}), takesMcp('codex', {}), takesMcp('aider', {}), takesMcp('generic', template), takesMcp('generic', { command: 'x {prompt}' })], [true, true, false, true, false]);
});

Argv('agents.<name>.command replaces the binary, or the whole command when it has placeholders', () => {
  assert.equal(buildArgv('gemini', { command: 'npx "@google/gemini-cli"' }, values).slice(0, 4), ['npx', '@google/gemini-cli', '-p', values.prompt]);
  assert.equal(buildArgv('claude', { command: 'wrapper --file {prompt_file}' }, values), ['wrapper', '--file', '/tmp/p 1.md']);
});

Argv('a prompt too long for argv is replaced by a pointer to the prompt file', () => {
  const argv = buildArgv('claude', {}, { ...values, prompt: 'x'.repeat(200_000) });
  assert.ok(argv[2]!.length < 300);
  assert.ok(argv[2]!.includes('/tmp/p 1.md'));
});

const Choice = suite('detection and choice');

function binDir(names: string[]) {
  const tmp = makeTempDir('svc-bin-');
  for (const n of names) {
    const f = join(tmp.dir, n);
    writeFileSync(f, '#!/bin/sh\nexit 0\n');
    chmodSync(f, 0o755);
  }
  mkdirSync(join(tmp.dir, 'gemini')); // a folder named like a CLI is not an executable
  writeFileSync(join(tmp.dir, 'qwen'), 'not executable');
  return tmp;
}

Choice('finds only executables on the PATH it is given, in preference order', async () => {
  const bin = binDir(['codex', 'claude']);
  try {
    const agents = parseConfig({ agents: { preference: ['codex', 'claude'] } }).agents;
    const found = await detectAdapters({ agents, pathEnv: `/nonexistent:${bin.dir}` });
    assert.equal(found.map((d) => d.name), ['codex', 'claude']);
    assert.equal(found[0]!.executable, join(bin.dir, 'codex'));
    assert.equal((await detectAdapters({ agents, pathEnv: '/nonexistent' })).length, 0);
  } finally {
    bin.cleanup();
  }
});

Choice('generic is found through its configured command', async () => {
  const bin = binDir(['my-agent']);
  try {
    const agents = parseConfig({ agents: { generic: { command: 'my-agent --prompt {prompt}' } } }).agents;
    const found = await detectAdapters({ agents, pathEnv: bin.dir });
    assert.equal(found.map((d) => d.name), ['generic']);
  } finally {
    bin.cleanup();
  }
});

Choice('task adapter beats agents.default beats first found', () => {
  const detected = [{ name: 'codex' as const, executable: '/b/codex' }, { name: 'claude' as const, executable: '/b/claude' }];
  const plain = parseConfig({}).agents;
  const withDefault = parseConfig({ agents: { default: 'claude' } }).agents;
  assert.equal(chooseAdapter({ agents: plain, detected }), { ok: true, name: 'codex' });
  assert.equal(chooseAdapter({ agents: withDefault, detected }), { ok: true, name: 'claude' });
  assert.equal(chooseAdapter({ requested: 'codex', agents: withDefault, detected }), { ok: true, name: 'codex' });
  assert.equal(chooseAdapter({ requested: 'gemini', agents: plain, detected }).ok, false);
  assert.equal(chooseAdapter({ requested: 'nope', agents: plain, detected }).ok, false);
  assert.equal(chooseAdapter({ agents: plain, detected: [] }).ok, false);
});

Choice('the task model wins over agents.<name>.model, which wins over none', () => {
  const agents = parseConfig({ agents: { claude: { model: 'cfg-model' } } }).agents;
  const v = { prompt_file: 'p', prompt: 'hi', task_id: 't', session_id: 's', worktree: 'w' };
  assert.is(planLaunch({ adapter: 'claude', agents, taskModel: 'task-model', values: v }).model, 'task-model');
  assert.is(planLaunch({ adapter: 'claude', agents, taskModel: null, values: v }).model, 'cfg-model');
  const none = planLaunch({ adapter: 'codex', agents, values: v });
  assert.is(none.model, '');
  assert.not.ok(none.argv.includes('--model'));
});

Template.run();
Argv.run();
Choice.run();
