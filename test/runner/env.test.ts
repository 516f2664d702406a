// What agents and gates see of the server's environment: an allow-list, never the server's secrets.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentEnv, allowedEnv, envPolicy, gateEnv, secretEnvNames } from '../../src/runner/index.ts';
import { parseConfig } from '../../src/config/index.ts';

const E = suite('agent and gate environment');

const SERVER_ENV = {
  PATH: '/usr/bin', HOME: '/home/svc', LANG: 'C.UTF-8', LC_TIME: 'de_DE.UTF-8', TERM: 'xterm',
  SERVICE_AUTH_TOKEN: 'admin-secret', SERVICE_WEBHOOK_SECRET: 'hook-secret', SERVICE_CLUSTER_SECRET: 'cluster',
  AWS_SECRET_ACCESS_KEY: 'aws', DATABASE_URL: 'postgres://x', ANTHROPIC_API_KEY: 'sk-ant', TRACKER_TOKEN: 'tracker', MY_TOOL_HOME: '/opt/t',
};

E('an agent gets PATH, HOME, locale, its credentials passthrough and its own SERVICE_* values only', () => {
  const config = parseConfig({});
  const env = agentEnv({ base: SERVER_ENV, serverUrl: 'http://127.0.0.1:1', taskId: 't1', sessionId: 's1', token: 'task-token', policy: envPolicy(config) });
  assert.equal(Object.keys(env).sort(), ['ANTHROPIC_API_KEY', 'HOME', 'LANG', 'LC_TIME', 'PATH', 'SERVICE_AUTH_TOKEN', 'SERVICE_SERVER_URL', 'SERVICE_SESSION_ID', 'SERVICE_TASK_ID', 'TERM']);
  assert.is(env.SERVICE_AUTH_TOKEN, 'task-token');
});

E('agents.env_passthrough adds names (a trailing * is a prefix); SERVICE_* and secret_env names never pass', () => {
  const config = parseConfig({ agents: { env_passthrough: ['MY_TOOL_*', 'SERVICE_WEBHOOK_SECRET', 'TRACKER_TOKEN'], secret_env: ['AWS_SECRET_ACCESS_KEY'] }, trackers: [{ secret_env: 'TRACKER_TOKEN' }] });
  assert.equal(secretEnvNames(config).sort(), ['AWS_SECRET_ACCESS_KEY', 'TRACKER_TOKEN']);
  const env = allowedEnv(SERVER_ENV, envPolicy(config));
  assert.equal(Object.keys(env).sort(), ['HOME', 'LANG', 'LC_TIME', 'MY_TOOL_HOME', 'PATH', 'TERM']);
});

E('a gate gets the allow-list and which task and session it checks, no token and no server', () => {
  const env = gateEnv(SERVER_ENV, envPolicy(parseConfig({})), { taskId: 't1', sessionId: 's1' });
  assert.is(env.SERVICE_TASK_ID, 't1');
  assert.is(env.SERVICE_AUTH_TOKEN, undefined);
  assert.is(env.SERVICE_CLUSTER_SECRET, undefined);
  assert.is(env.DATABASE_URL, undefined);
  assert.is(env.PATH, '/usr/bin');
});

E.run();
