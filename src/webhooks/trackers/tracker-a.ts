// tracker_a (jira-style): jira:issue_* events signed `sha256=`; list API GET /rest/api/3/search/jql with nextPageToken.
import type { Ticket, TicketAction } from '../ticket.ts';
import { docText, first, httpPage, isoTime, labelNames, obj, str, trimBase, type Json } from './fields.ts';
import type { TrackerAdapter } from './types.ts';

const FIELDS = 'summary,description,status,labels,updated,reporter,creator';

/** Closed when the status is in the done category (or, without a category, named like a final state). */
function isDone(status: Json): boolean {
  const category = str(obj(status.statusCategory).key).toLowerCase();
  if (category) return category === 'done';
  return /^(done|closed|resolved|cancel+ed)$/i.test(str(status.name));
}

/** A ticket from an issue object (webhook `issue` or an item of the search API). */
export function jiraTicket(issue: Json): Ticket {
  const f = obj(issue.fields);
  const key = str(issue.key);
  let url = '';
  try {
    if (str(issue.self) && key) url = `${new URL(str(issue.self)).origin}/browse/${key}`;
  } catch { /* a self link that is not a URL: no link */ }
  return {
    adapter: 'tracker_a', id: first(issue.id, key), key, title: str(f.summary), body: docText(f.description ?? ''), url,
    state: isDone(obj(f.status)) ? 'closed' : 'open', labels: labelNames(f.labels),
    author: first(obj(f.reporter).displayName, obj(f.creator).displayName), updated_at: isoTime(f.updated),
  };
}

// An update's action from its changelog: a status change closes or reopens, a label change labels, anything else edits.
function updateAction(body: Json, ticket: Ticket): TicketAction {
  const items = Array.isArray(obj(body.changelog).items) ? (obj(body.changelog).items as unknown[]).map(obj) : [];
  if (items.some((i) => str(i.field).toLowerCase() === 'status' || str(i.field).toLowerCase() === 'resolution')) return ticket.state === 'closed' ? 'closed' : 'reopened';
  if (items.some((i) => str(i.field).toLowerCase() === 'labels')) return 'labelled';
  return ticket.state === 'closed' ? 'closed' : 'edited';
}

export const trackerA: TrackerAdapter = {
  name: 'tracker_a',
  vendor: 'jira',
  scheme: 'sha256-prefixed',
  signatureHeaders: ['x-hub-signature-256', 'x-hub-signature'],
  deliveryHeaders: ['x-tracker_a-webhook-identifier', 'x-atlassian-webhook-identifier'],
  understands: ['jira:issue_created', 'jira:issue_updated (status, resolution, labels, summary, description)', 'jira:issue_deleted'],
  fromWebhook(body) {
    const event = str(body.webhookEvent);
    if (!['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted'].includes(event)) return null;
    const issue = obj(body.issue);
    if (!str(issue.key) && !str(issue.id)) return null;
    const ticket = jiraTicket(issue);
    const action: TicketAction = event === 'jira:issue_created' ? 'opened' : event === 'jira:issue_deleted' ? 'deleted' : updateAction(body, ticket);
    return { action, ticket };
  },
  poll: {
    request(t, cursor) {
      const order = t.newest_first ? 'DESC' : 'ASC';
      // Relative minutes (`updated >= -90m`) need no time zone; one minute more than needed, the watermark filters the rest.
      const since = t.sinceMs === null ? 'statusCategory != Done' : `updated >= -${Math.max(1, Math.ceil((t.nowMs - t.sinceMs) / 60_000) + 1)}m`;
      const jql = `project = "${t.project.replace(/"/g, '')}" AND ${since} ORDER BY updated ${order}`;
      const q = new URLSearchParams({ jql, fields: FIELDS, maxResults: '100', ...(cursor ? { nextPageToken: cursor } : {}) });
      // API tokens of the cloud product go as basic auth (`email:token`); a token without a colon is a bearer (data center PAT).
      const auth = t.token.includes(':') ? `Basic ${Buffer.from(t.token).toString('base64')}` : t.token ? `Bearer ${t.token}` : '';
      return { url: `${trimBase(t.api_url)}/rest/api/3/search/jql?${q}`, method: 'GET', headers: { accept: 'application/json', ...(auth ? { authorization: auth } : {}) } };
    },
    page(res) {
      return httpPage(res, () => {
        const b = obj(res.body);
        const issues = Array.isArray(b.issues) ? (b.issues as unknown[]).map(obj) : [];
        const next = b.isLast === true ? null : str(b.nextPageToken) || null;
        return { kind: 'page', tickets: issues.map(jiraTicket), next };
      });
    },
  },
};
