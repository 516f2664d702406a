// Route lookup by method and path: a tree of path segments per method, static segments before
// parameters at every position (so /tasks/search wins over /tasks/:task_id), static segments
// compared without case and one trailing slash allowed, as polka's patterns matched. Pure.

// A route's end: its value and its parameter names in path order (two patterns may name one position differently).
interface Leaf<T> { value: T; names: string[] }
interface Node<T> {
  statics: Map<string, Node<T>>;
  param?: Node<T>;
  leaf?: Leaf<T>;
}

/** A route found: its value and its parameters (percent-decoded where they decode). */
export interface Match<T> {
  value: T;
  params: Record<string, string>;
}

export interface Router<T> {
  /** The route for `method` (HEAD falls back to GET) and `path` (no query string), or undefined. */
  find(method: string, path: string): Match<T> | undefined;
  /** The methods some route answers for `path` (for a 405's Allow header). */
  methods(path: string): string[];
}

const node = <T>(): Node<T> => ({ statics: new Map() });

// '/a/b/' → ['a', 'b']; '/' → []. An empty segment inside stays and matches nothing.
function segments(path: string): string[] {
  const parts = path.split('/');
  parts.shift();
  if (parts.length && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** A router over `routes` (`:name` segments are parameters); the first of two equal patterns wins. */
export function createRouter<T>(routes: readonly { method: string; path: string; value: T }[]): Router<T> {
  const roots = new Map<string, Node<T>>();
  for (const r of routes) {
    let at = roots.get(r.method) ?? node<T>();
    roots.set(r.method, at);
    const names: string[] = [];
    for (const seg of segments(r.path)) {
      if (seg.startsWith(':')) {
        names.push(seg.slice(1));
        at = at.param ??= node();
      } else {
        const key = seg.toLowerCase();
        let next = at.statics.get(key);
        if (!next) at.statics.set(key, (next = node()));
        at = next;
      }
    }
    at.leaf ??= { value: r.value, names };
  }

  // Depth first, static before parameter: the most specific route at the first position where they differ.
  const walk = (at: Node<T>, segs: string[], i: number, found: string[]): Leaf<T> | undefined => {
    if (i === segs.length) return at.leaf;
    const seg = segs[i]!;
    const viaStatic = at.statics.get(seg.toLowerCase());
    const hit = viaStatic && walk(viaStatic, segs, i + 1, found);
    if (hit !== undefined) return hit;
    if (!at.param || seg === '') return undefined;
    found.push(seg);
    const viaParam = walk(at.param, segs, i + 1, found);
    if (viaParam === undefined) found.pop();
    return viaParam;
  };

  const lookup = (method: string, path: string): Match<T> | undefined => {
    const root = roots.get(method);
    if (!root) return undefined;
    const found: string[] = [];
    const leaf = walk(root, segments(path), 0, found);
    if (leaf === undefined) return undefined;
    const params: Record<string, string> = {};
    leaf.names.forEach((name, k) => { params[name] = decode(found[k]!); });
    return { value: leaf.value, params };
  };

  return {
    find: (method, path) => lookup(method, path) ?? (method === 'HEAD' ? lookup('GET', path) : undefined),
    methods: (path) => [...roots.keys()].filter((m) => lookup(m, path) !== undefined),
  };
}

function decode(s: string): string {
  if (!s.includes('%')) return s;
  try { return decodeURIComponent(s); } catch { return s; }
}
