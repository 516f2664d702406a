// tracker_d (linear-style): Issue events signed with raw-hex HMAC; list API: the GraphQL `issues` connection.
import type { Ticket, TicketAction } from '../ticket.ts';
import { first, httpPage, isoTime, labelNames, obj, str, trimBase, type Json } from './fields.ts';
import type { TrackerAdapter } from './types.ts';

const CLOSED_STATES = new Set(['completed', 'canceled', 'cancelled']);
const QUERY = `query Issues($first: Int!, $after: String, $filter: IssueFilter) {
  issues(first: $first, after: $after, filter: $filter, orderBy: updatedAt) {
    nodes { id identifier title description url updatedAt state { name type } labels { nodes { name } } creator { name } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** A ticket from an issue object (webhook `data` or a node of the GraphQL connection). */
export function linearTicket(data: Json): Ticket {
  const state = obj(data.state);
  return {
    adapter: 'tracker_d', id: first(data.id, data.identifier), key: first(data.identifier, data.id),
    title: str(data.title), body: str(data.description), url: str(data.url),
    state: CLOSED_STATES.has(str(state.type).toLowerCase()) ? 'closed' : 'open',
    labels: labelNames(data.labels), author: first(obj(data.creator).name, obj(data.creator).displayName), updated_at: isoTime(data.updatedAt),
  };
}

// An update's action from `updatedFrom` (the previous values of the changed fields).
function updateAction(body: Json, ticket: Ticket): TicketAction {
  const from = obj(body.updatedFrom);
  if (ticket.state === 'closed') return 'closed';
  if (str(from.completedAt) || str(from.canceledAt)) return 'reopened';
  if ('labelIds' in from && !('title' in from) && !('description' in from)) return 'labelled';
  return 'edited';
}

export const trackerD: TrackerAdapter = {
  name: 'tracker_d',
  vendor: 'linear',
  scheme: 'raw-hex',
  signatureHeaders: ['tracker_d-signature', 'linear-signature'],
  deliveryHeaders: ['tracker_d-delivery', 'linear-delivery'],
  understands: ['Issue: create, update (state, labels, title, description), remove (other types such as Comment are ignored)'],
  fromWebhook(body) {
    if (str(body.type) !== 'Issue') return null;
    const data = obj(body.data);
    if (!str(data.id)) return null;
    // A hook payload may carry the issue's author as the top-level actor only.
    const ticket = linearTicket({ ...data, creator: data.creator ?? body.actor });
    const action = str(body.action);
    return { action: action === 'create' ? 'opened' : action === 'remove' ? 'deleted' : updateAction(body, ticket), ticket };
  },
  poll: {
    request(t, cursor) {
      const which = t.sinceMs === null ? { state: { type: { nin: ['completed', 'canceled'] } } } : { updatedAt: { gte: new Date(t.sinceMs).toISOString() } };
      const filter = { team: { key: { eq: t.project } }, ...which };
      // Personal API keys go as they are; OAuth access tokens as bearers.
      const auth = t.token.startsWith('lin_api_') ? t.token : t.token ? `Bearer ${t.token}` : '';
      return {
        url: `${trimBase(t.api_url)}/graphql`, method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ query: QUERY, variables: { first: 50, after: cursor, filter } }),
      };
    },
    page(res) {
      // GraphQL answers a rate limit as 400 (or 429) with the error code RATELIMITED.
      const errors = Array.isArray(obj(res.body).errors) ? (obj(res.body).errors as unknown[]).map(obj) : [];
      if (errors.some((e) => obj(e.extensions).code === 'RATELIMITED')) return { kind: 'rate_limited', retryAfterS: null };
      return httpPage(res, () => {
        if (errors.length) return { kind: 'error', message: `GraphQL: ${str(errors[0]!.message).slice(0, 200)}` };
        const conn = obj(obj(obj(res.body).data).issues);
        const nodes = Array.isArray(conn.nodes) ? (conn.nodes as unknown[]).map(obj) : [];
        const info = obj(conn.pageInfo);
        return { kind: 'page', tickets: nodes.map(linearTicket), next: info.hasNextPage === true ? str(info.endCursor) || null : null };
      });
    },
  },
};
