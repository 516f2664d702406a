// How `svc task` prints tasks for people (pure: data in, text out; `--json` prints the data instead).
import { cut, table } from './table.ts';

type Task = Record<string, unknown> & { id: string; title: string; status: string };

/** Columns of task tables. */
export const TASK_COLUMNS = ['id', 'status', 'role', 'priority', 'title'];

/** One task per line: id, status, role, priority and the title cut with `…`. */
export function taskTable(tasks: readonly Task[]): string {
  return table([...tasks], TASK_COLUMNS);
}

const FIRST = ['id', 'title', 'status', 'status_reason', 'role', 'priority', 'depends_on', 'branch', 'claimed_by_session', 'result_summary', 'failure'];

/** Every field of a task, one per line, the ones people look for first. */
export function taskDetail(t: Record<string, unknown>): string {
  const keys = [...FIRST.filter((k) => k in t), ...Object.keys(t).filter((k) => !FIRST.includes(k) && k !== 'description')];
  const fields = keys.map((k): [string, unknown] => [k, t[k]]);
  const desc = typeof t.description === 'string' && t.description ? `\n\n${t.description}` : '';
  return fields
    .map(([k, v]) => `${k.padEnd(20)} ${v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('\n') + desc;
}

/** The graph of GET /tasks/graph. */
export interface Graph {
  nodes: { id: string; role: string; status: string; estimated_minutes: number; title: string }[];
  edges: { from: string; to: string; type: string }[];
  critical_path: string[];
  critical_path_minutes: number;
  parallel_width: number;
  bottlenecks: string[];
}

/** The dependency tree (each task under what it waits on), the critical path and the bottlenecks, as text. */
export function graphText(g: Graph): string {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const deps = g.edges.filter((e) => e.type === 'depends_on' && byId.has(e.from) && byId.has(e.to));
  const children = new Map<string, string[]>();
  const hasParent = new Set<string>();
  for (const e of deps) {
    children.set(e.from, [...(children.get(e.from) ?? []), e.to]);
    hasParent.add(e.to);
  }
  const label = (id: string) => {
    const n = byId.get(id)!;
    return `${id}  ${n.status.padEnd(20)} ${cut(n.title, 60)}`;
  };
  const lines: string[] = [];
  const shown = new Set<string>();
  const walk = (id: string, prefix: string, last: boolean, depth: number) => {
    const branch = depth === 0 ? '' : `${prefix}${last ? '└─ ' : '├─ '}`;
    if (shown.has(id)) { lines.push(`${branch}${id}  (shown above)`); return; }
    shown.add(id);
    lines.push(`${branch}${label(id)}`);
    const kids = children.get(id) ?? [];
    const next = depth === 0 ? '' : `${prefix}${last ? '   ' : '│  '}`;
    kids.forEach((k, i) => walk(k, next, i === kids.length - 1, depth + 1));
  };
  for (const n of g.nodes) if (!hasParent.has(n.id)) walk(n.id, '', true, 0);
  // Tasks on a dependency cycle have no root above them.
  for (const n of g.nodes) if (!shown.has(n.id)) walk(n.id, '', true, 0);
  const names = (ids: string[]) => ids.map((id) => `${id} ${cut(byId.get(id)?.title ?? '', 40)}`);
  return [
    lines.length ? lines.join('\n') : '(no tasks)',
    '',
    `critical path (${g.critical_path_minutes} min): ${g.critical_path.length ? names(g.critical_path).join(' → ') : '-'}`,
    `parallel width: ${g.parallel_width}`,
    `bottlenecks: ${g.bottlenecks.length ? names(g.bottlenecks).join(', ') : '-'}`,
  ].join('\n');
}
