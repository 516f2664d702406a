// tracker_b (github-style): `issues` events signed `sha256=`; list API GET /repos/{owner}/{repo}/issues with Link paging.
import type { Ticket, TicketAction } from '../ticket.ts';
import { first, httpPage, isoTime, labelNames, linkNext, obj, str, trimBase, type Json } from './fields.ts';
import type { TrackerAdapter } from './types.ts';

const ACTIONS: Record<string, TicketAction> = {
  opened: 'opened', edited: 'edited', closed: 'closed', reopened: 'reopened',
  labeled: 'labelled', unlabeled: 'labelled', deleted: 'deleted', transferred: 'deleted',
};

/** A ticket from an issue object (webhook `issue` or an item of the list API); `repo` is owner/name when known. */
export function githubTicket(issue: Json, repo: string): Ticket {
  const url = str(issue.html_url);
  const fromUrl = /github\.com\/([^/]+\/[^/]+)\/issues\/\d+/.exec(url)?.[1] ?? '';
  const number = str(issue.number);
  const name = repo || fromUrl;
  return {
    adapter: 'tracker_b', id: first(issue.id, issue.node_id, name && number ? `${name}#${number}` : ''),
    key: name && number ? `${name}#${number}` : number ? `#${number}` : '',
    title: str(issue.title), body: str(issue.body), url,
    state: issue.state === 'closed' ? 'closed' : 'open',
    labels: labelNames(issue.labels), author: str(obj(issue.user).login), updated_at: isoTime(issue.updated_at),
  };
}

export const trackerB: TrackerAdapter = {
  name: 'tracker_b',
  vendor: 'github',
  scheme: 'sha256-prefixed',
  signatureHeaders: ['x-hub-signature-256'],
  deliveryHeaders: ['x-tracker_b-delivery', 'x-github-delivery'],
  understands: ['issues: opened, edited, closed, reopened, labeled, unlabeled, deleted, transferred (pull requests and other events are ignored)'],
  fromWebhook(body, header) {
    const event = header('x-github-event') ?? header('x-tracker_b-event') ?? (body.issue ? 'issues' : '');
    const issue = obj(body.issue);
    if (event !== 'issues' || !Object.keys(issue).length || issue.pull_request) return null;
    const ticket = githubTicket(issue, str(obj(body.repository).full_name));
    if (!ticket.id) return null;
    return { action: ACTIONS[str(body.action)] ?? 'edited', ticket };
  },
  poll: {
    request(t, cursor) {
      const sort = t.newest_first ? '&sort=updated&direction=desc' : '&sort=updated&direction=asc';
      return {
        url: cursor ?? `${trimBase(t.api_url)}/repos/${t.project}/issues?${t.sinceMs === null ? 'state=open' : `state=all&since=${new Date(t.sinceMs).toISOString()}`}&per_page=100${sort}`,
        method: 'GET',
        headers: { accept: 'application/vnd.github+json', ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) },
      };
    },
    page(res, t) {
      // The rate limit of this API answers 403 (or 429) with x-ratelimit-remaining 0.
      if (res.status === 403 && res.header('x-ratelimit-remaining') === '0') {
        const reset = Number(res.header('x-ratelimit-reset'));
        const after = Number(res.header('retry-after'));
        return { kind: 'rate_limited', retryAfterS: Number.isFinite(after) && after > 0 ? after : Number.isFinite(reset) && reset > 0 ? Math.max(0, reset - res.nowMs / 1000) : null };
      }
      return httpPage(res, () => {
        const items = Array.isArray(res.body) ? (res.body as unknown[]) : [];
        const tickets = items.map(obj).filter((i) => !i.pull_request).map((i) => githubTicket(i, t.project));
        return { kind: 'page', tickets, next: linkNext(res.header('link')) };
      });
    },
  },
};
