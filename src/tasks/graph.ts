import { SATISFIED, TERMINAL } from './machine.ts';
import type { GraphNeighbors, Task, TaskGraph } from './schema.ts';

// Adjacency over depends_on edges by array index: preds[i] = what i waits on, succs[i] = what waits on i.
interface Dag { preds: number[][]; succs: number[][]; topo: number[] }

/** The task graph of GET /tasks/graph: nodes, edges, critical path, parallel width and bottlenecks. */
export function buildGraph(tasks: readonly Task[]): TaskGraph {
  const index = new Map(tasks.map((t, i) => [t.id, i]));
  const edges: TaskGraph['edges'] = [];
  const preds: number[][] = tasks.map(() => []);
  const succs: number[][] = tasks.map(() => []);
  tasks.forEach((t, i) => {
    for (const dep of new Set(t.depends_on)) {
      const j = index.get(dep);
      if (j === undefined || j === i) continue;
      edges.push({ from: dep, to: t.id, type: 'depends_on', semantic_type: 'blocks' });
      preds[i]!.push(j);
      succs[j]!.push(i);
    }
    if (t.parent_task_id !== null && index.has(t.parent_task_id)) {
      edges.push({ from: t.parent_task_id, to: t.id, type: 'parent', semantic_type: 'informs' });
    }
  });
  const dag: Dag = { preds, succs, topo: topoOrder(succs, preds) };
  const nodes = tasks.map((t) => ({ id: t.id, role: t.role, status: t.status, estimated_minutes: t.estimated_minutes, title: t.title }));
  return { nodes, edges, ...longestChain(tasks, dag), bottlenecks: bottlenecks(tasks, dag) };
}

// Kahn's algorithm; nodes on a cycle never reach in-degree 0 and are left out.
function topoOrder(succs: number[][], preds: number[][]): number[] {
  const indeg = preds.map((p) => p.length);
  const order: number[] = [];
  indeg.forEach((d, i) => { if (d === 0) order.push(i); });
  for (let k = 0; k < order.length; k++) {
    for (const s of succs[order[k]!]!) if (--indeg[s]! === 0) order.push(s);
  }
  return order;
}

const minutes = (t: Task): number => (Number.isFinite(t.estimated_minutes) && t.estimated_minutes > 0 ? t.estimated_minutes : 0);

// Longest chain weighted by estimated_minutes, and the widest topological level.
function longestChain(tasks: readonly Task[], { preds, topo }: Dag) {
  const dist = new Float64Array(tasks.length);
  const level = new Int32Array(tasks.length);
  const best = new Int32Array(tasks.length).fill(-1);
  const width = new Map<number, number>();
  let end = -1;
  for (const i of topo) {
    let base = 0;
    for (const p of preds[i]!) {
      if (best[i] === -1 || dist[p]! > base) { base = dist[p]!; best[i] = p; }
      level[i] = Math.max(level[i]!, level[p]! + 1);
    }
    dist[i] = base + minutes(tasks[i]!);
    width.set(level[i]!, (width.get(level[i]!) ?? 0) + 1);
    if (end === -1 || dist[i]! > dist[end]!) end = i;
  }
  const path: string[] = [];
  for (let i = end; i !== -1; i = best[i]!) path.push(tasks[i]!.id);
  path.reverse();
  return {
    critical_path: path,
    critical_path_minutes: end === -1 ? 0 : dist[end]!,
    parallel_width: [...width.values()].reduce((a, b) => Math.max(a, b), 0),
  };
}

const CHUNK_WORDS = 128; // 4096 target bits per pass keeps memory at 512 bytes per relevant node.

/**
 * Unfinished tasks with at least 2 transitive dependents, most first (ties by id). Exact counts through
 * chunked bitsets over the dependents of unfinished tasks only: O(edges × relevant / 32) word operations.
 */
function bottlenecks(tasks: readonly Task[], { succs, topo }: Dag): string[] {
  const unfinished = (i: number) => !SATISFIED.has(tasks[i]!.status) && !TERMINAL.has(tasks[i]!.status);
  const inTopo = new Uint8Array(tasks.length);
  for (const i of topo) inTopo[i] = 1;
  const relevant = new Uint8Array(tasks.length);
  const stack = topo.filter((i) => unfinished(i) && succs[i]!.length > 0);
  for (const i of stack) relevant[i] = 1;
  while (stack.length) for (const s of succs[stack.pop()!]!) if (!relevant[s] && inTopo[s]) { relevant[s] = 1; stack.push(s); }
  const order = topo.filter((i) => relevant[i]).reverse(); // dependents before what they depend on
  const slot = new Int32Array(tasks.length).fill(-1);
  order.forEach((i, k) => { slot[i] = k; });
  const counts = new Int32Array(tasks.length);
  const rows = new Uint32Array(order.length * CHUNK_WORDS);
  for (let base = 0; base < order.length; base += CHUNK_WORDS * 32) {
    rows.fill(0);
    for (const v of order) {
      const row = slot[v]! * CHUNK_WORDS;
      for (const w of succs[v]!) {
        const from = slot[w]! * CHUNK_WORDS;
        for (let k = 0; k < CHUNK_WORDS; k++) rows[row + k]! |= rows[from + k]!;
        const bit = slot[w]! - base;
        if (bit >= 0 && bit < CHUNK_WORDS * 32) rows[row + (bit >>> 5)]! |= 1 << (bit & 31);
      }
      if (unfinished(v)) for (let k = 0; k < CHUNK_WORDS; k++) counts[v]! += popcount(rows[row + k]!);
    }
  }
  return order.filter((i) => unfinished(i) && counts[i]! >= 2)
    .sort((a, b) => counts[b]! - counts[a]! || (tasks[a]!.id < tasks[b]!.id ? -1 : 1))
    .map((i) => tasks[i]!.id);
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Depth-1 neighbours: the tasks `task` depends on, and the tasks that depend on it. */
export function neighbors(task: Task, get: (id: string) => Task | undefined, dependentsOf: (id: string) => readonly Task[]): GraphNeighbors {
  const upstream = task.depends_on.map(get).filter((t): t is Task => t !== undefined);
  return { task_id: task.id, upstream, downstream: [...dependentsOf(task.id)] };
}

/**
 * The cycle a new task `newId` depending on `dependsOn` would close, as a path `[newId, …, newId]`, or null.
 * `depsOf` gives the depends_on of an existing (or pending) task. Iterative, each task visited once.
 */
export function findCycle(newId: string, dependsOn: readonly string[], depsOf: (id: string) => readonly string[] | undefined): string[] | null {
  const done = new Set<string>();
  const onPath = new Set<string>([newId]);
  const path: string[] = [newId];
  const stack: { id: string; next: number; deps: readonly string[] }[] = [{ id: newId, next: 0, deps: dependsOn }];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const dep = top.deps[top.next++];
    if (dep === undefined) { done.add(top.id); onPath.delete(top.id); stack.pop(); path.pop(); continue; }
    if (dep === newId) return [...path, newId];
    if (done.has(dep) || onPath.has(dep)) continue;
    stack.push({ id: dep, next: 0, deps: depsOf(dep) ?? [] });
    path.push(dep);
    onPath.add(dep);
  }
  return null;
}

/** The 422 detail for a dependency cycle. */
export const cycleDetail = (cycle: readonly string[]): string => `Circular dependency detected: ${cycle.join(' -> ')}`;
