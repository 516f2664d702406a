// Local fake tracker servers speaking the five list APIs the startup poll reads (paging, rate limits, slowness, failures).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One issue, rendered in each tracker's own shape. */
export interface FakeIssue {
  n: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
  updated_at: string;
}

export interface FakeTrackerOptions {
  kind: 'tracker_a' | 'tracker_b' | 'tracker_c' | 'tracker_d' | 'tracker_e';
  issues: FakeIssue[];
  /** Issues per page, whatever the client asks (default 7). */
  pageSize?: number;
  /** The first N requests are rate limited in the tracker's own way. */
  rateLimited?: number;
  /** Seconds sent as Retry-After with a rate limit (GitHub: x-ratelimit-reset is used instead when 0). */
  retryAfterS?: number;
  /** Delay before each answer. */
  delayMs?: number;
  /** Answer every request with this status. */
  failStatus?: number;
}

/** A running fake; `requests` records each request's page (1-based) and query. */
export interface FakeTracker {
  url: string;
  requests: { page: number; rateLimited: boolean; query: Record<string, string> }[];
  close(): Promise<void>;
}

/** Start a fake of one tracker's list API on a free port. */
export async function startFakeTracker(o: FakeTrackerOptions): Promise<FakeTracker> {
  const size = o.pageSize ?? 7;
  const requests: FakeTracker['requests'] = [];
  let seen = 0;
  const server: Server = createServer((req, res) => void handle(req, res));
  const url = await new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', url);
    const body = await new Promise<string>((r) => { let b = ''; req.on('data', (c) => (b += c)); req.on('end', () => r(b)); });
    if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
    const query = Object.fromEntries(u.searchParams);
    const gql = o.kind === 'tracker_d' && body ? JSON.parse(body) as { variables: Record<string, unknown> } : undefined;
    const cursor = o.kind === 'tracker_d' ? (gql?.variables.after as string | null) ?? null : query.nextPageToken ?? query.cursor ?? query.page ?? null;
    const page = cursor ? Number(cursor) : 1;
    const limited = seen++ < (o.rateLimited ?? 0);
    requests.push({ page, rateLimited: limited, query: gql ? { filter: JSON.stringify(gql.variables.filter) } : query });
    if (o.failStatus) return send(res, o.failStatus, { message: 'boom' });
    if (limited) return rateLimit(res);
    const list = select(u, query, gql?.variables.filter);
    const items = list.slice((page - 1) * size, page * size);
    const next = page * size < list.length ? String(page + 1) : null;
    render(res, items, next, u);
  }

  function rateLimit(res: ServerResponse): void {
    const after = String(o.retryAfterS ?? 1);
    if (o.kind === 'tracker_b') return send(res, 403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'retry-after': after });
    if (o.kind === 'tracker_d') return send(res, 400, { errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] });
    send(res, 429, { message: 'Too Many Requests' }, { 'retry-after': after });
  }

  // The filters each API offers: open only, changed since, newest first or oldest first.
  function select(u: URL, q: Record<string, string>, gqlFilter: unknown): FakeIssue[] {
    let list = [...o.issues];
    const desc = o.kind === 'tracker_a' ? /DESC/.test(q.jql ?? '') : o.kind === 'tracker_b' ? q.direction !== 'asc' : o.kind === 'tracker_c' ? q.sort !== 'asc' : o.kind === 'tracker_e' ? (q.order_by ?? '').startsWith('-') : true;
    const f = JSON.stringify(gqlFilter ?? {});
    const since = q.since ?? q.updated_after ?? /"gte":"([^"]+)"/.exec(f)?.[1];
    const minutes = /updated >= -(\d+)m/.exec(q.jql ?? '')?.[1];
    const openOnly = q.state === 'open' || q.state === 'opened' || /statusCategory != Done/.test(q.jql ?? '') || /"nin"/.test(f);
    if (openOnly) list = list.filter((i) => i.state === 'open');
    if (since) list = list.filter((i) => i.updated_at >= new Date(since).toISOString());
    if (minutes) list = list.filter((i) => Date.parse(i.updated_at) >= Date.now() - Number(minutes) * 60_000);
    list.sort((a, b) => (a.updated_at < b.updated_at ? -1 : 1));
    return desc ? list.reverse() : list;
  }

  function render(res: ServerResponse, items: FakeIssue[], next: string | null, u: URL): void {
    const t = (i: FakeIssue) => i;
    switch (o.kind) {
      case 'tracker_a': return send(res, 200, { isLast: next === null, ...(next ? { nextPageToken: next } : {}), issues: items.map((i) => ({
        id: String(10000 + t(i).n), key: `PROJ-${i.n}`, self: `${url}/rest/api/3/issue/${10000 + i.n}`,
        fields: { summary: i.title, description: i.body, labels: i.labels, updated: i.updated_at.replace('Z', '+0000'), status: { name: i.state === 'open' ? 'To Do' : 'Done', statusCategory: { key: i.state === 'open' ? 'new' : 'done' } }, reporter: { displayName: 'Alice' } },
      })) });
      case 'tracker_b': {
        const link = next ? `<${url}${u.pathname}?${new URLSearchParams({ ...Object.fromEntries(u.searchParams), page: next })}>; rel="next", <${url}${u.pathname}?page=99>; rel="last"` : '';
        return send(res, 200, items.map((i) => ({ id: 20000 + i.n, number: i.n, title: i.title, body: i.body, state: i.state, html_url: `https://github.example/octo/app/issues/${i.n}`, labels: i.labels.map((name) => ({ name })), user: { login: 'octocat' }, updated_at: i.updated_at })), link ? { link } : {});
      }
      case 'tracker_c': return send(res, 200, items.map((i) => ({ id: 30000 + i.n, iid: i.n, title: i.title, description: i.body, state: i.state === 'open' ? 'opened' : 'closed', web_url: `https://gitlab.example/group/app/-/issues/${i.n}`, labels: i.labels, author: { username: 'grace' }, updated_at: i.updated_at, references: { full: `group/app#${i.n}` } })), next ? { 'x-next-page': next } : { 'x-next-page': '' });
      case 'tracker_d': return send(res, 200, { data: { issues: { nodes: items.map((i) => ({ id: `lin-${i.n}`, identifier: `ENG-${i.n}`, title: i.title, description: i.body, url: `https://linear.example/issue/ENG-${i.n}`, updatedAt: i.updated_at, state: { name: i.state === 'open' ? 'Todo' : 'Done', type: i.state === 'open' ? 'unstarted' : 'completed' }, labels: { nodes: i.labels.map((name) => ({ name })) }, creator: { name: 'Linus' } })), pageInfo: { hasNextPage: next !== null, endCursor: next } } } });
      case 'tracker_e': return send(res, 200, { next_page_results: next !== null, next_cursor: next ?? '', results: items.map((i) => ({ id: `pl-${i.n}`, name: i.title, description_stripped: i.body, sequence_id: i.n, project: 'proj', state: { name: i.state === 'open' ? 'Todo' : 'Done', group: i.state === 'open' ? 'unstarted' : 'completed' }, labels: i.labels.map((name) => ({ name })), updated_at: i.updated_at })) });
    }
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  return { url, requests, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** `count` issues updated one minute apart from `start`, all open unless listed in `closed`. */
export function fakeIssues(count: number, start = Date.parse('2026-11-20T10:00:00Z'), closed: number[] = []): FakeIssue[] {
  return Array.from({ length: count }, (_, k) => ({
    n: k + 1, title: `Issue ${k + 1}`, body: `Body of issue ${k + 1}`, state: closed.includes(k + 1) ? 'closed' : 'open',
    labels: k % 3 === 0 ? ['role:qa'] : [], updated_at: new Date(start + k * 60_000).toISOString(),
  }));
}
