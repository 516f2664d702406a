// tracker_c (gitlab-style): issue hooks proven by the secret token; list API GET /api/v4/projects/:id/issues with X-Next-Page.
import type { Ticket, TicketAction } from '../ticket.ts';
import { first, httpPage, isoTime, labelNames, obj, str, trimBase, type Json } from './fields.ts';
import type { TrackerAdapter } from './types.ts';

const ACTIONS: Record<string, TicketAction> = { open: 'opened', update: 'edited', close: 'closed', reopen: 'reopened' };

/** A ticket from an issue (the hook's object_attributes with its project and labels, or an item of the list API). */
export function gitlabTicket(issue: Json, project: string, labels: unknown, author: string): Ticket {
  const iid = str(issue.iid);
  const ref = str(obj(issue.references).full);
  const key = ref || (project && iid ? `${project}#${iid}` : iid ? `#${iid}` : '');
  return {
    adapter: 'tracker_c', id: first(issue.id, key), key, title: str(issue.title), body: str(issue.description),
    url: first(issue.url, issue.web_url), state: issue.state === 'closed' ? 'closed' : 'open',
    labels: labelNames(labels ?? issue.labels), author, updated_at: isoTime(issue.updated_at),
  };
}

export const trackerC: TrackerAdapter = {
  name: 'tracker_c',
  vendor: 'gitlab',
  scheme: 'token',
  signatureHeaders: ['x-tracker_c-token', 'x-gitlab-token'],
  deliveryHeaders: ['x-tracker_c-event-uuid', 'x-gitlab-event-uuid'],
  understands: ['Issue Hook (object_kind issue, or work_item of type Issue): open, update, close, reopen'],
  fromWebhook(body) {
    const kind = str(body.object_kind);
    const attrs = obj(body.object_attributes);
    if (kind !== 'issue' && !(kind === 'work_item' && (attrs.type === undefined || attrs.type === 'Issue'))) return null;
    const project = first(obj(body.project).path_with_namespace, obj(body.project).name);
    const ticket = gitlabTicket(attrs, project, body.labels ?? attrs.labels, str(obj(body.user).username));
    if (!ticket.id || !str(attrs.iid)) return null;
    const changes = obj(body.changes);
    let action = ACTIONS[str(attrs.action)] ?? 'edited';
    if (action === 'edited' && changes.labels && !changes.title && !changes.description) action = 'labelled';
    return { action, ticket };
  },
  poll: {
    request(t, cursor) {
      const sort = t.newest_first ? 'desc' : 'asc';
      const which: Record<string, string> = t.sinceMs === null ? { state: 'opened' } : { updated_after: new Date(t.sinceMs).toISOString() };
      const q = new URLSearchParams({ ...which, order_by: 'updated_at', sort, per_page: '100', page: cursor ?? '1' });
      return {
        url: `${trimBase(t.api_url)}/api/v4/projects/${encodeURIComponent(t.project)}/issues?${q}`,
        method: 'GET', headers: { accept: 'application/json', ...(t.token ? { 'private-token': t.token } : {}) },
      };
    },
    page(res, t) {
      return httpPage(res, () => {
        const items = Array.isArray(res.body) ? (res.body as unknown[]).map(obj) : [];
        const tickets = items.map((i) => gitlabTicket(i, t.project, i.labels, str(obj(i.author).username)));
        return { kind: 'page', tickets, next: res.header('x-next-page')?.trim() || null };
      });
    },
  },
};
