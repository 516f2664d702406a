import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentEnv, buildPrompt, GATE_CONTEXT_BYTES, promptPath, withSvcOnPath } from '../../src/runner/index.ts';
import { sddLayout } from '../../src/store/layout.ts';

const Prompt = suite('agent prompt');

Prompt('tells the agent its task, worktree, branch and how to report', () => {
  const text = buildPrompt({
    task: { id: '01jtask', title: 'Add login', description: 'Make /login work.\nFAKE: commit' },
    sessionId: 'backend-0a1b2c3d',
    worktree: '/r/.sdd/worktrees/backend-0a1b2c3d',
    branch: 'agent/backend-0a1b2c3d',
    baseBranch: 'main',
    serverUrl: 'http://127.0.0.1:8052',
  });
  for (const needle of ['01jtask', 'Add login', 'Make /login work.', '\nFAKE: commit', '/r/.sdd/worktrees/backend-0a1b2c3d', 'agent/backend-0a1b2c3d', 'SERVICE_AUTH_TOKEN', '/tasks/01jtask/complete', 'svc task complete', 'svc task fail', 'result_summary', 'refused']) {
    assert.ok(text.includes(needle), `prompt lacks ${needle}`);
  }
  assert.not.ok(text.includes('MCP'), 'no MCP server given: none named');
});

Prompt('an agent given the svc MCP server is told its tools act on its task', () => {
  const text = buildPrompt({ task: { id: '01jtask', title: 't', description: '' }, sessionId: 's', worktree: '/w', branch: 'b', baseBranch: 'main', serverUrl: 'http://x', mcp: true });
  assert.match(text, /the `svc` MCP server you were given: report_progress, complete_task .*\n.*they act on this task when you leave task_id out/);
});

Prompt('the agent env carries the task-scoped token, never the server admin token', () => {
  const env = agentEnv({ base: { PATH: '/bin', SERVICE_AUTH_TOKEN: 'admin-secret', UNSET: undefined }, serverUrl: 'http://h:1', taskId: 't1', sessionId: 's1', token: 'task-token' });
  assert.equal(env, { PATH: '/bin', SERVICE_SERVER_URL: 'http://h:1', SERVICE_TASK_ID: 't1', SERVICE_SESSION_ID: 's1', SERVICE_AUTH_TOKEN: 'task-token' });
});

Prompt('the running svc comes first on the agent PATH, once', () => {
  const env = agentEnv({ base: { PATH: '/usr/bin:/srv/.sdd/runtime/bin:/bin' }, serverUrl: 'http://h:1', taskId: 't1', sessionId: 's1', token: 'tt', svcBinDir: '/srv/.sdd/runtime/bin' });
  assert.is(env.PATH, '/srv/.sdd/runtime/bin:/usr/bin:/bin');
  assert.is(withSvcOnPath(undefined, '/b'), '/b');
  assert.is(withSvcOnPath('/usr/bin', undefined), '/usr/bin');
});

Prompt('a re-run prompt names the attempt, each failed gate with its command, and at most 4 KB of their output', () => {
  const big = Array.from({ length: 2000 }, (_, i) => `line ${i} of the test output`).join('\n');
  const base = { task: { id: 't1', title: 'T', description: 'd' }, sessionId: 's2', worktree: '/w', branch: 'agent/s2', baseBranch: 'main', serverUrl: 'http://h' };
  const text = buildPrompt({
    ...base,
    previous: {
      attempt: 3, maxReopens: 2, workRef: 'refs/sdd/graveyard/s1',
      failedGates: [
        { name: 'test', command: 'npm test', status: 'fail', exit_code: 1, output_tail: big },
        { name: 'lint', command: 'npm run lint', status: 'timeout', exit_code: null, output_tail: 'lint: slow\n' },
      ],
    },
  });
  for (const needle of ['## Attempt 3', '### Gate `test`: fail (exit 1)', 'Command: `npm test`', '### Gate `lint`: timeout', 'Command: `npm run lint`', 'lint: slow', 'line 1999 of the test output', 'refs/sdd/graveyard/s1']) {
    assert.ok(text.includes(needle), `prompt has ${needle}`);
  }
  assert.not.ok(text.includes('line 10 of the test output'), 'the start of a long output is cut');
  const plain = buildPrompt(base);
  assert.ok(Buffer.byteLength(text) - Buffer.byteLength(plain) < GATE_CONTEXT_BYTES + 1500, 'the gate section stays near its 4 KB budget');
  assert.not.ok(plain.includes('## Attempt'));
});

Prompt('prompt files live under .sdd/runtime, and bad ids never reach a path', () => {
  const layout = sddLayout('/repo');
  assert.is(promptPath(layout, 'backend-0a1b2c3d'), '/repo/.sdd/runtime/prompts/backend-0a1b2c3d.md');
  assert.throws(() => promptPath(layout, '../evil'));
});

Prompt.run();
