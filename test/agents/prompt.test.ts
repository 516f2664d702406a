import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentEnv, buildPrompt, promptPath } from '../../src/agents/index.ts';
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
});

Prompt('the agent env carries the task-scoped token, never the server admin token', () => {
  const env = agentEnv({ base: { PATH: '/bin', SERVICE_AUTH_TOKEN: 'admin-secret', UNSET: undefined }, serverUrl: 'http://h:1', taskId: 't1', sessionId: 's1', token: 'task-token' });
  assert.equal(env, { PATH: '/bin', SERVICE_SERVER_URL: 'http://h:1', SERVICE_TASK_ID: 't1', SERVICE_SESSION_ID: 's1', SERVICE_AUTH_TOKEN: 'task-token' });
});

Prompt('prompt files live under .sdd/runtime, and bad ids never reach a path', () => {
  const layout = sddLayout('/repo');
  assert.is(promptPath(layout, 'backend-0a1b2c3d'), '/repo/.sdd/runtime/prompts/backend-0a1b2c3d.md');
  assert.throws(() => promptPath(layout, '../evil'));
});

Prompt.run();
