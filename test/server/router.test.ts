import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRouter } from '../../src/server/router.ts';

const r = suite('router (pure)');
const routes = [
  ['GET', '/tasks'], ['POST', '/tasks'], ['GET', '/tasks/search'], ['GET', '/tasks/:task_id'], ['POST', '/tasks/:task_id/complete'],
  ['GET', '/tasks/next/:role'], ['GET', '/tasks/:task_id/progress'], ['DELETE', '/cluster/nodes/:id'], ['GET', '/'],
].map(([method, path]) => ({ method: method!, path: path!, value: `${method} ${path}` }));
const router = createRouter(routes);
const find = (m: string, p: string) => router.find(m, p);

r('a static segment wins over a parameter at the same position; parameters are named and decoded', () => {
  assert.equal(find('GET', '/tasks/search'), { value: 'GET /tasks/search', params: {} });
  assert.equal(find('GET', '/tasks/01abc'), { value: 'GET /tasks/:task_id', params: { task_id: '01abc' } });
  assert.equal(find('GET', '/tasks/next/backend'), { value: 'GET /tasks/next/:role', params: { role: 'backend' } });
  assert.equal(find('GET', '/tasks/next/progress'), { value: 'GET /tasks/next/:role', params: { role: 'progress' } });
  assert.equal(find('GET', '/tasks/abc/progress'), { value: 'GET /tasks/:task_id/progress', params: { task_id: 'abc' } });
  assert.equal(find('POST', '/tasks/a%20b%2Fc/complete'), { value: 'POST /tasks/:task_id/complete', params: { task_id: 'a b/c' } });
  assert.equal(find('GET', '/tasks/%E0%A4%A'), { value: 'GET /tasks/:task_id', params: { task_id: '%E0%A4%A' } }, 'a bad escape stays as sent');
});

r('a static dead end falls back to the parameter (backtracking)', () => {
  // /tasks/next has a static child but no route of its own at two segments under GET /tasks/:task_id.
  assert.equal(find('GET', '/tasks/next'), { value: 'GET /tasks/:task_id', params: { task_id: 'next' } });
});

r('one trailing slash is allowed, static segments ignore case; empty segments match nothing', () => {
  assert.is(find('GET', '/tasks/')?.value, 'GET /tasks');
  assert.is(find('GET', '/TASKS/Search')?.value, 'GET /tasks/search');
  assert.equal(find('GET', '/tasks/AbC')?.params, { task_id: 'AbC' }, 'parameters keep their case');
  assert.is(find('GET', '/tasks//progress'), undefined);
  assert.is(find('GET', '/tasks//'), undefined);
  assert.is(find('GET', '/')?.value, 'GET /');
  assert.is(find('GET', '/nope'), undefined);
});

r('HEAD is answered by GET routes; methods() lists what a path answers (405 Allow)', () => {
  assert.is(find('HEAD', '/tasks/x')?.value, 'GET /tasks/:task_id');
  assert.is(find('PUT', '/tasks'), undefined);
  assert.equal(router.methods('/tasks').sort(), ['GET', 'POST']);
  assert.equal(router.methods('/cluster/nodes/n1'), ['DELETE']);
  assert.equal(router.methods('/nope'), []);
});

r('the first of two routes with one pattern wins; routes that name one position differently keep their names', () => {
  const two = createRouter([{ method: 'GET', path: '/a/:x', value: 1 }, { method: 'GET', path: '/a/:y', value: 2 },
    { method: 'GET', path: '/a/:x/b', value: 3 }, { method: 'GET', path: '/a/:y/c', value: 4 }]);
  assert.equal(two.find('GET', '/a/z'), { value: 1, params: { x: 'z' } });
  assert.equal(two.find('GET', '/a/z/b'), { value: 3, params: { x: 'z' } });
  assert.equal(two.find('GET', '/a/z/c'), { value: 4, params: { y: 'z' } });
});

r.run();
