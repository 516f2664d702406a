import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { accessDenied, ROLE_ACCESS, roleAllows } from '../../src/auth/index.ts';
import type { Access, Principal, Role } from '../../src/lib/route.ts';

const ROLES: Role[] = ['viewer', 'agent', 'operator', 'admin'];
const LEVELS: Access[] = ['public', 'hmac', 'read', 'task', 'operate', 'admin'];
// Expected matrix: row = role, columns in LEVELS order.
const EXPECTED: Record<Role, boolean[]> = {
  viewer: [true, true, true, false, false, false],
  agent: [true, true, true, true, false, false],
  operator: [true, true, true, true, true, false],
  admin: [true, true, true, true, true, true],
};
const who = (role: Role, taskId?: string): Principal => ({ kind: 'token', role, tenant: null, actor: 'tok_x', ...(taskId ? { taskId } : {}) });

const T = suite('roles');

T('every role × access level pair', () => {
  for (const role of ROLES) {
    LEVELS.forEach((level, i) => {
      assert.is(roleAllows(role, level), EXPECTED[role][i], `${role} ${level}`);
      assert.is(accessDenied(who(role), level, {}) === null, EXPECTED[role][i], `${role} ${level}`);
    });
  }
  assert.equal(Object.keys(ROLE_ACCESS).sort(), [...ROLES].sort());
});

T('denials carry the contract wording', () => {
  assert.is(accessDenied(who('operator'), 'admin', {})?.detail, 'admin role required');
  assert.is(accessDenied(who('viewer'), 'task', {})?.detail, 'viewer role cannot access this endpoint');
  assert.is(accessDenied(who('viewer'), 'task', {})?.status, 403);
});

T('a task-scoped token only reaches routes that admit it, and with `own` only its own task_id', () => {
  assert.is(accessDenied(who('agent', 'a'), 'task', { task_id: 'a' }, 'own'), null);
  assert.is(accessDenied(who('agent', 'a'), 'task', { task_id: 'b' }, 'own')?.status, 403);
  assert.is(accessDenied(who('agent', 'a'), 'task', { task_id: 'a' })?.status, 403, 'a route that declares no task scope refuses it');
  assert.is(accessDenied(who('agent', 'a'), 'read', { role: 'backend' })?.status, 403, 'board-wide reads are outside its task');
  assert.is(accessDenied(who('agent', 'a'), 'task', {}, 'parent'), null, 'parent and session scopes are checked by their handlers');
  assert.is(accessDenied(who('agent'), 'task', { task_id: 'b' }), null, 'unscoped tokens reach every task');
});

T.run();
