import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { HttpError } from '../../src/lib/http-error.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { sddLayout } from '../../src/store/layout.ts';
import {
  addTenant, checkQuota, ensureTenants, listTenants, loadTenants, parseTenants, resolveTenantScope, setTenant,
  type TenantMap,
} from '../../src/auth/tenants.ts';
import { createTenantGate } from '../../src/auth/tenant-gate.ts';
import { makeTempDir } from '../helpers/repo.ts';

// Run `fn`, expect an HttpError, return it.
function httpError(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HttpError) return e;
    throw e;
  }
  throw new Error('expected an HttpError');
}
async function httpErrorAsync(p: Promise<unknown>): Promise<HttpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HttpError) return e;
    throw e;
  }
  throw new Error('expected an HttpError');
}

const tenantMap: TenantMap = { default: {}, acme: { max_tasks: 3 }, beta: {} };
const registry = () => tenantMap;

const Registry = suite('tenant registry file');

Registry('add writes sorted names and keys, 2-space JSON, trailing newline, with default present', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  await addTenant(layout, 'zeta', { maxTasks: 5 });
  await addTenant(layout, 'acme');
  assert.is(readFileSync(layout.tenants, 'utf8'), '{\n  "acme": {},\n  "default": {},\n  "zeta": {\n    "max_tasks": 5\n  }\n}\n');
  tmp.cleanup();
});

Registry('default always exists: missing file, file without it, and ensureTenants creates it', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  assert.equal(await loadTenants(layout), { default: {} });
  await ensureTenants(layout);
  assert.is(readFileSync(layout.tenants, 'utf8'), '{\n  "default": {}\n}\n');
  writeFileSync(layout.tenants, '{"acme":{"max_tasks":2}}');
  assert.equal(await loadTenants(layout), { acme: { max_tasks: 2 }, default: {} });
  tmp.cleanup();
});

Registry('add refuses duplicates (409) and bad names (422); set changes or clears a quota, 404 for unknown', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  await addTenant(layout, 'acme', { maxTasks: 10 });
  assert.is((await httpErrorAsync(addTenant(layout, 'acme'))).status, 409);
  for (const bad of ['Acme', '-x', '', 'a/b', '../x', 'x'.repeat(65)]) {
    assert.is((await httpErrorAsync(addTenant(layout, bad))).status, 422, bad);
  }
  assert.is((await httpErrorAsync(addTenant(layout, 'neg', { maxTasks: -1 }))).status, 422);
  await setTenant(layout, 'acme', { maxTasks: 20 });
  assert.equal((await loadTenants(layout)).acme, { max_tasks: 20 });
  await setTenant(layout, 'acme', { maxTasks: null });
  assert.equal(await listTenants(layout, 50), [
    { name: 'acme', max_tasks: 50, explicit: false },
    { name: 'default', max_tasks: 50, explicit: false },
  ]);
  const missing = await httpErrorAsync(setTenant(layout, 'ghost', { maxTasks: 1 }));
  assert.equal([missing.status, missing.detail], [404, "unknown tenant 'ghost'"]);
  tmp.cleanup();
});

Registry('concurrent adds from one process all land (the file is locked per read-modify-write)', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  await Promise.all(Array.from({ length: 8 }, (_, i) => addTenant(layout, `t${i}`, { maxTasks: i })));
  const map = await loadTenants(layout);
  assert.equal(Object.keys(map).sort(), ['default', 't0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
  tmp.cleanup();
});

Registry('a malformed registry file is refused with its reason', () => {
  assert.throws(() => parseTenants('[]'), /expected an object/);
  assert.throws(() => parseTenants('{"Bad":{}}'), /invalid tenant name 'Bad'/);
  assert.throws(() => parseTenants('{"a":{"max_tasks":"9"}}'), /max_tasks/);
});

const Scope = suite('tenant scope');

Scope('a bound credential naming another tenant gets 403 with the contract detail', () => {
  const e = httpError(() => resolveTenantScope({ boundTenant: 'acme', header: 'beta', registry }));
  assert.equal([e.status, e.body()], [403, { detail: "tenant scope 'beta' is not accessible from 'acme'" }]);
  const q = httpError(() => resolveTenantScope({ boundTenant: 'acme', query: 'default', registry }));
  assert.is(q.status, 403);
  // Existence of other tenants is not revealed to a bound credential.
  assert.is(httpError(() => resolveTenantScope({ boundTenant: 'acme', header: 'ghost', registry })).status, 403);
});

Scope('an unknown tenant is 404; nothing named means the bound tenant, else default', () => {
  const e = httpError(() => resolveTenantScope({ boundTenant: null, query: 'ghost', registry }));
  assert.equal([e.status, e.body()], [404, { detail: "unknown tenant 'ghost'" }]);
  assert.is(resolveTenantScope({ boundTenant: null, registry }), 'default');
  // Every registry holds the default tenant: a request in it does not read tenants.json (a stat per request).
  assert.is(resolveTenantScope({ boundTenant: null, registry: () => { throw new Error('the registry was read'); } }), 'default');
  assert.is(resolveTenantScope({ boundTenant: 'acme', registry }), 'acme');
  assert.is(resolveTenantScope({ boundTenant: 'acme', header: 'acme', query: 'acme', registry }), 'acme');
  assert.is(resolveTenantScope({ boundTenant: null, header: ' Beta ', registry }), 'beta');
  assert.is(httpError(() => resolveTenantScope({ boundTenant: 'gone', registry })).status, 404);
});

Scope('header and query naming different tenants is 422', () => {
  const e = httpError(() => resolveTenantScope({ boundTenant: null, header: 'acme', query: 'beta', registry }));
  assert.is(e.status, 422);
  assert.match(e.detail, "X-Tenant-ID 'acme' and ?tenant='beta'");
});

const Quota = suite('tenant quota');

Quota('exactly max_tasks active is allowed, one more is 429 saying how to raise the quota, with no Retry-After', () => {
  checkQuota({ tenant: 'acme', activeCount: 2, adding: 1, registry: tenantMap });
  const e = httpError(() => checkQuota({ tenant: 'acme', activeCount: 3, adding: 1, registry: tenantMap }));
  assert.equal([e.status, e.body(), e.headers], [429, {
    detail: "Tenant 'acme' has reached max_tasks limit (3); finish or cancel tasks, or raise it: svc tenant set acme --max-tasks 6",
  }, {}]);
});

Quota('a batch counts every task it would create', () => {
  checkQuota({ tenant: 'acme', activeCount: 0, adding: 3, registry: tenantMap });
  assert.is(httpError(() => checkQuota({ tenant: 'acme', activeCount: 0, adding: 4, registry: tenantMap })).status, 429);
  assert.is(httpError(() => checkQuota({ tenant: 'acme', activeCount: 1, adding: 3, registry: tenantMap })).status, 429);
});

Quota('a tenant without max_tasks gets the configured default, else 1000', () => {
  checkQuota({ tenant: 'beta', activeCount: 999, adding: 1, registry: tenantMap });
  assert.match(httpError(() => checkQuota({ tenant: 'beta', activeCount: 1000, adding: 1, registry: tenantMap })).detail,
    "Tenant 'beta' has reached max_tasks limit (1000);");
  checkQuota({ tenant: 'beta', activeCount: 9, adding: 1, registry: tenantMap, defaultMax: 10 });
  assert.is(httpError(() => checkQuota({ tenant: 'beta', activeCount: 10, adding: 1, registry: tenantMap, defaultMax: 10 })).status, 429);
});

const Gate = suite('tenant gate (what the server asks on each request)');

Gate('a tenant added while the server runs is seen on the next request', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  const gate = createTenantGate({ layout, log: silentLogger(), defaultMax: 2 });
  assert.is(httpError(() => gate.scope(null, 'acme', undefined)).status, 404);
  await addTenant(layout, 'acme', { maxTasks: 1 });
  assert.is(gate.scope(null, 'acme', undefined), 'acme');
  assert.is(httpError(() => gate.checkQuota('acme', 1, 1)).status, 429);
  gate.checkQuota('default', 1, 1);
  assert.is(httpError(() => gate.checkQuota('default', 2, 1)).status, 429);
  tmp.cleanup();
});

Gate('a broken hand edit keeps the last good registry until the file is fixed', async () => {
  const tmp = makeTempDir('svc-tenants-');
  const layout = sddLayout(tmp.dir);
  await addTenant(layout, 'acme');
  const gate = createTenantGate({ layout, log: silentLogger(), defaultMax: 10 });
  assert.is(gate.scope(null, 'acme', undefined), 'acme');
  writeFileSync(layout.tenants, '{"acme": ');
  assert.is(gate.scope(null, 'acme', undefined), 'acme', 'still the last good registry');
  writeFileSync(layout.tenants, '{"beta": {}}\n');
  assert.is(gate.scope(null, 'beta', undefined), 'beta');
  assert.is(httpError(() => gate.scope(null, 'acme', undefined)).status, 404);
  tmp.cleanup();
});

Registry.run();
Scope.run();
Quota.run();
Gate.run();
