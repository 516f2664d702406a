import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildGraph, cycleDetail, findCycle, neighbors } from '../../src/tasks/graph.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { task } from './fixtures.ts';

const g = suite('task graph');
const t = (id: string, deps: string[], minutes: number, over: Partial<Task> = {}) =>
  task(id, { depends_on: deps, estimated_minutes: minutes, ...over });

// a(10) -> b(20) -> d(5);  a -> c(40) -> d;  e(1) alone; f is a's subtask.
const diamond = () => [
  t('a', [], 10), t('b', ['a'], 20), t('c', ['a'], 40), t('d', ['b', 'c'], 5), t('e', [], 1),
  t('f', [], 2, { parent_task_id: 'a' }),
];

g('edges carry depends_on/blocks and parent/informs, from the upstream task', () => {
  const graph = buildGraph(diamond());
  assert.equal(graph.edges, [
    { from: 'a', to: 'b', type: 'depends_on', semantic_type: 'blocks' },
    { from: 'a', to: 'c', type: 'depends_on', semantic_type: 'blocks' },
    { from: 'b', to: 'd', type: 'depends_on', semantic_type: 'blocks' },
    { from: 'c', to: 'd', type: 'depends_on', semantic_type: 'blocks' },
    { from: 'a', to: 'f', type: 'parent', semantic_type: 'informs' },
  ]);
  assert.equal(graph.nodes[0], { id: 'a', role: 'backend', status: 'open', estimated_minutes: 10, title: 'task a' });
});

g('critical path is the longest chain by estimated minutes', () => {
  const graph = buildGraph(diamond());
  assert.equal(graph.critical_path, ['a', 'c', 'd']);
  assert.is(graph.critical_path_minutes, 55);
});

g('parallel width is the largest topological level', () => {
  // level 0: a, e, f; level 1: b, c; level 2: d
  assert.is(buildGraph(diamond()).parallel_width, 3);
  assert.is(buildGraph([t('x', [], 1), t('y', ['x'], 1), t('z', ['y'], 1)]).parallel_width, 1);
});

g('bottlenecks are unfinished tasks with at least two transitive dependents, most first', () => {
  assert.equal(buildGraph(diamond()).bottlenecks, ['a']); // a: b, c, d (3); b, c: d only (1)
  // chain p -> q -> r -> s plus q -> u: p has 4, q has 3, r has 1
  const chain = [t('p', [], 1), t('q', ['p'], 1), t('r', ['q'], 1), t('s', ['r'], 1), t('u', ['q'], 1)];
  assert.equal(buildGraph(chain).bottlenecks, ['p', 'q']);
  const doneP = chain.map((x) => (x.id === 'p' ? { ...x, status: 'done' as const } : x));
  assert.equal(buildGraph(doneP).bottlenecks, ['q'], 'a done task blocks nothing');
});

g('an empty board and dependencies outside the set give an empty, valid graph', () => {
  assert.equal(buildGraph([]), { nodes: [], edges: [], critical_path: [], critical_path_minutes: 0, parallel_width: 0, bottlenecks: [] });
  const g1 = buildGraph([t('x', ['elsewhere'], 7)]);
  assert.equal(g1.edges, []);
  assert.equal(g1.critical_path, ['x']);
});

g('10k tasks with 20k edges: the critical path runs through every task, n0 is the top bottleneck', () => {
  const tasks: Task[] = [];
  for (let i = 0; i < 10_000; i++) {
    const deps = i === 0 ? [] : [`n${Math.floor(i / 2)}`, `n${i - 1}`].filter((d, k, a) => a.indexOf(d) === k && d !== `n${i}`);
    tasks.push(t(`n${i}`, i === 0 ? [] : deps, 1 + (i % 7)));
  }
  const graph = buildGraph(tasks);
  assert.is(graph.critical_path.length, 10_000);
  assert.is(graph.bottlenecks[0], 'n0');
});

const n = suite('neighbours and cycles');

n('neighbours are the depends_on tasks upstream and the dependents downstream', () => {
  const ts = diamond();
  const byId = new Map(ts.map((x) => [x.id, x]));
  const r = neighbors(byId.get('b')!, (id) => byId.get(id), (id) => ts.filter((x) => x.depends_on.includes(id)));
  assert.equal([r.task_id, r.upstream.map((x) => x.id), r.downstream.map((x) => x.id)], ['b', ['a'], ['d']]);
});

n('a dependency on a task that (transitively) depends on the new one is a cycle, named in order', () => {
  const deps: Record<string, string[]> = { a: ['b'], b: ['new'], c: [] };
  const depsOf = (id: string) => deps[id];
  assert.equal(findCycle('new', ['c', 'a'], depsOf), ['new', 'a', 'b', 'new']);
  assert.is(cycleDetail(['new', 'a', 'b', 'new']), 'Circular dependency detected: new -> a -> b -> new');
  assert.equal(findCycle('new', ['new'], depsOf), ['new', 'new']);
  assert.is(findCycle('new', ['c'], depsOf), null);
});

n('an existing cycle that does not involve the new task neither loops nor reports', () => {
  const deps: Record<string, string[]> = { a: ['b'], b: ['a'] };
  assert.is(findCycle('new', ['a'], (id) => deps[id]), null);
});

n('cycle search over a 10k-long chain is iterative and fast', () => {
  const depsOf = (id: string) => { const i = Number(id.slice(1)); return i === 0 ? ['new'] : [`n${i - 1}`]; };
  const cycle = findCycle('new', ['n9999'], depsOf);
  assert.is(cycle?.length, 10_002);
});

g.run();
n.run();
