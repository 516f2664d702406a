// Auth suite: every non-public route of /openapi.json refuses missing, malformed, unknown, expired and
// revoked tokens with 401; wrong roles get 403, another tenant 403/404; public paths need no token.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { addTenant, createToken, revokeToken } from '../../src/auth/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { rawRequest, report, sleep } from './lib.ts';

const PUBLIC = ['/health', '/health/ready', '/health/live', '/ready', '/alive', '/.well-known/agent.json', '/docs', '/openapi.json', '/auth/providers', '/board',
  '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'];
const JSON_CT = { 'content-type': 'application/json' };
// Routes that authenticate by their own HMAC signature and take no bearer token (INTERFACE Authentication 4).
const SIGNED = (path: string) => path === '/webhook' || path.startsWith('/webhooks/') || path.startsWith('/hooks/');

const test = suite('auth');
let repo: TempRepo;
let s: RunningServer;
let routes: { method: string; path: string }[];
let task: any;
const tok: Record<string, string> = {};
const stats = { requests: 0, refused_401: 0, refused_403: 0, tenant_refusals: 0, routes: 0 };

test.before(async () => {
  repo = makeRepo('svc-auth-');
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  const layout = sddLayout(repo.dir);
  await addTenant(layout, 'acme');
  for (const role of ['viewer', 'agent', 'operator'] as const) tok[role] = (await createToken(layout, { role }, systemClock)).token;
  tok.acme = (await createToken(layout, { role: 'agent', tenant: 'acme' }, systemClock)).token;
  tok.expired = (await createToken(layout, { role: 'admin', expiresIn: '1s' }, systemClock)).token;
  const revoked = await createToken(layout, { role: 'admin' }, systemClock);
  await revokeToken(layout, revoked.record.id, systemClock);
  tok.revoked = revoked.token;
  task = (await s.api('POST', '/tasks', { title: 'the default tenant\'s task' })).body;
  const spec = (await s.api('GET', '/openapi.json')).body;
  routes = Object.entries<any>(spec.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));
  await sleep(1100); // the 1 s token is now expired
});
test.after(async () => {
  await s.kill();
  repo.cleanup();
});

const fill = (path: string) => path.replace('{task_id}', task.id).replace('{role}', 'backend').replace(/\{[^}]+\}/g, 'backend-0123abcd');
const call = async (method: string, path: string, headers: Record<string, string>) => {
  stats.requests++;
  const body = method === 'GET' ? undefined : '{}';
  return rawRequest(s.port, { method, path, headers: body ? { ...JSON_CT, ...headers } : headers, body, timeoutMs: 5000 });
};

test('every non-public route refuses a missing, malformed, unknown, expired or revoked token with 401', async () => {
  const bad: [string, Record<string, string>][] = [
    ['missing', {}], ['Basic', { authorization: 'Basic x' }], ['bare Bearer', { authorization: 'Bearer' }],
    ['Bearer and spaces', { authorization: 'Bearer  ' }], ['unknown', { authorization: 'Bearer svc_not-a-token-at-all' }],
    ['expired', { authorization: `Bearer ${tok.expired}` }], ['revoked', { authorization: `Bearer ${tok.revoked}` }],
  ];
  const wrong: string[] = [];
  for (const r of routes.filter((x) => !PUBLIC.includes(x.path) && !SIGNED(x.path))) {
    stats.routes++;
    for (const [label, headers] of bad) {
      const res = await call(r.method, fill(r.path), headers);
      if (res.status === 401 && typeof res.json?.detail === 'string') stats.refused_401++;
      else wrong.push(`${r.method} ${r.path} [${label}]: ${res.status} ${res.text.slice(0, 100)}`);
    }
  }
  assert.equal(wrong, []);
  assert.ok(stats.routes > 20, `checked ${stats.routes} routes`);
  const after = await s.api('GET', `/tasks/${task.id}`);
  assert.is(after.body.version, task.version, 'refused calls changed nothing');
});

test('a viewer gets 403 on every write, an agent 403 on /drain; both still read', async () => {
  // git-upload-pack is a POST that only reads (a fetch of refs/sdd/state): any role may call it.
  // /mcp: any role opens an MCP session; each tool refuses what its API operation refuses (test/mcp).
  const writes = routes.filter((r) => !PUBLIC.includes(r.path) && !SIGNED(r.path) && (r.method !== 'GET' || r.path === '/tasks/next/{role}') && r.path !== '/state.git/git-upload-pack' && r.path !== '/mcp');
  const wrong: string[] = [];
  for (const r of writes) {
    const res = await call(r.method, fill(r.path), { authorization: `Bearer ${tok.viewer}` });
    if (res.status === 403 && typeof res.json?.detail === 'string') stats.refused_403++;
    else wrong.push(`viewer ${r.method} ${r.path}: ${res.status} ${res.text.slice(0, 100)}`);
  }
  for (const path of ['/drain', '/drain/cancel']) {
    const res = await call('POST', path, { authorization: `Bearer ${tok.agent}` });
    if (res.status === 403 && res.json?.detail === 'admin role required') stats.refused_403++;
    else wrong.push(`agent POST ${path}: ${res.status} ${res.text.slice(0, 100)}`);
  }
  assert.equal(wrong, []);
  assert.is((await s.api('GET', '/drain')).body.draining, false, 'no refused call drained the server');
  for (const role of ['viewer', 'agent', 'operator']) {
    assert.is((await call('GET', `/tasks/${task.id}`, { authorization: `Bearer ${tok[role]}` })).status, 200, `${role} reads a task`);
    assert.is((await call('GET', '/state.git/info/refs?service=git-upload-pack', { authorization: `Bearer ${tok[role]}` })).status, 200, `${role} reads /state.git`);
  }
  assert.is((await call('POST', '/tasks', { authorization: `Bearer ${tok.agent}` })).status, 422, 'an agent reaches a write (then validation)');
});

test('signed webhook routes take no bearer token: unsigned, with any token (even the admin one), none answers 2xx', async () => {
  const signed = routes.filter((r) => SIGNED(r.path));
  assert.ok(signed.length >= 5, `${signed.length} signed routes`);
  const wrong: string[] = [];
  for (const r of signed) {
    for (const headers of [{}, { authorization: `Bearer ${s.token}` }, { authorization: `Bearer ${tok.viewer}` }] as Record<string, string>[]) {
      const res = await call(r.method, fill(r.path.replace('{adapter}', 'github')), headers);
      // 401 bad signature; 404 chat without a secret or an unknown session; 503 webhook, hooks or tracker without a secret.
      if (![401, 404, 503].includes(res.status) || typeof res.json?.detail !== 'string') wrong.push(`${r.method} ${r.path}: ${res.status} ${res.text.slice(0, 100)}`);
    }
  }
  assert.equal(wrong, []);
  assert.is((await s.api('GET', `/tasks/${task.id}`)).body.version, task.version);
});

test('a token bound to another tenant sees 404 for the task and 403 naming the other tenant', async () => {
  const acme = { authorization: `Bearer ${tok.acme}` };
  const checks: [string, string, Record<string, string>, number[]][] = [
    ['GET', `/tasks/${task.id}`, acme, [404]],
    ['POST', `/tasks/${task.id}/claim`, acme, [404]],
    ['POST', `/tasks/${task.id}/complete`, acme, [404, 422]],
    ['GET', '/tasks?tenant=default', acme, [403]],
    ['GET', '/tasks', { ...acme, 'x-tenant-id': 'default' }, [403]],
    ['GET', '/tasks/counts?tenant=default', acme, [403]],
  ];
  for (const [method, path, headers, want] of checks) {
    const res = await call(method, path, headers);
    assert.ok(want.includes(res.status) && typeof res.json?.detail !== 'undefined', `${method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
    stats.tenant_refusals++;
  }
  const own = await call('GET', '/tasks?limit=100', acme);
  assert.equal(own.json.tasks, [], 'the acme token lists none of default\'s tasks');
  assert.is((await s.api('GET', `/tasks/${task.id}`)).body.version, task.version, 'the other tenant changed nothing');
});

test('without SSO configured every listed /auth route answers 404 "SSO is not configured", with or without a token', async () => {
  const listed = [['GET', '/auth/login'], ['GET', '/auth/oidc/callback'], ['POST', '/auth/saml/acs'], ['GET', '/auth/saml/metadata'],
    ['POST', '/auth/cli/device'], ['POST', '/auth/cli/token'], ['POST', '/auth/cli/authorize'], ['POST', '/auth/logout'],
    ['GET', '/auth/group-mappings'], ['PUT', '/auth/group-mappings'], ['GET', '/auth/users']];
  for (const [method, path] of listed) {
    for (const headers of [{}, { authorization: `Bearer ${s.token}` }] as Record<string, string>[]) {
      const res = await call(method!, path!, headers);
      assert.is(res.status, 404, `${method} ${path}`);
      assert.equal(res.json, { detail: 'SSO is not configured' });
    }
  }
  const providers = await call('GET', '/auth/providers', {});
  assert.is(providers.json.configured, false);
  assert.equal(providers.json.providers, []);
  assert.is((await call('GET', '/auth/me', {})).status, 401);
  const me = await call('GET', '/auth/me', { authorization: `Bearer ${tok.viewer}` });
  assert.is(me.json.role, 'viewer', 'a token sees its own role');
  assert.is(me.json.kind, 'token');
});

test('public paths answer without a token', async () => {
  for (const path of PUBLIC) {
    const res = await call('GET', path, {});
    assert.ok(res.status === 200, `${path}: ${res.status}`);
  }
  report('auth', stats);
});

test.run();
