// tracker_e (plane-style): issue events signed with raw-hex HMAC; list API GET …/projects/{id}/issues/ with cursors.
import type { Ticket, TicketAction } from '../ticket.ts';
import { first, htmlText, httpPage, isoTime, labelNames, obj, str, trimBase, type Json } from './fields.ts';
import type { TrackerAdapter } from './types.ts';

const CLOSED_GROUPS = new Set(['completed', 'cancelled', 'canceled']);

/** A ticket from an issue object (webhook `data` or an item of the list API with state and labels expanded). */
export function planeTicket(data: Json): Ticket {
  const state = typeof data.state === 'object' ? obj(data.state) : obj(data.state_detail);
  const project = first(obj(data.project_detail).identifier, data.project, data.project_id);
  const seq = str(data.sequence_id);
  const labels = labelNames(Array.isArray(data.label_details) ? data.label_details : data.labels)
    .filter((l) => !/^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(l)); // bare label ids (not expanded) are not names
  return {
    adapter: 'tracker_e', id: first(data.id, project && seq ? `${project}#${seq}` : ''),
    key: project && seq ? (obj(data.project_detail).identifier ? `${project}-${seq}` : `${project}#${seq}`) : str(data.id),
    title: first(data.name, data.title),
    body: first(data.description_stripped, typeof data.description === 'string' ? data.description : '', htmlText(str(data.description_html))),
    url: str(data.url), state: CLOSED_GROUPS.has(str(state.group).toLowerCase()) ? 'closed' : 'open',
    labels, author: first(obj(data.created_by_detail).display_name, obj(data.created_by).display_name), updated_at: isoTime(data.updated_at),
  };
}

// An update's action from the activity Plane sends with it (field changed), and the new state.
function updateAction(body: Json, ticket: Ticket): TicketAction {
  if (ticket.state === 'closed') return 'closed';
  const field = str(obj(body.activity).field);
  // The old value is the previous state's name; the usual names of final states count.
  if (field === 'state' && (CLOSED_GROUPS.has(str(obj(body.activity).old_value).toLowerCase()) || /^(done|closed)$/i.test(str(obj(body.activity).old_value)))) return 'reopened';
  return field === 'labels' ? 'labelled' : 'edited';
}

export const trackerE: TrackerAdapter = {
  name: 'tracker_e',
  vendor: 'plane',
  scheme: 'raw-hex',
  signatureHeaders: ['x-tracker_e-signature', 'x-plane-signature'],
  deliveryHeaders: ['x-tracker_e-delivery', 'x-plane-delivery'],
  understands: ['issue (or work_item): created, updated (state, labels, name, description), deleted'],
  fromWebhook(body) {
    const event = str(body.event);
    if (event !== 'issue' && event !== 'work_item') return null;
    const data = obj(body.data);
    const ticket = planeTicket(data);
    if (!str(data.id)) return null;
    const action = str(body.action);
    return { action: action === 'created' || action === 'create' ? 'opened' : action === 'deleted' || action === 'delete' ? 'deleted' : updateAction(body, ticket), ticket };
  },
  poll: {
    request(t, cursor) {
      const [workspace = '', projectId = ''] = t.project.split('/');
      const q = new URLSearchParams({ per_page: '100', expand: 'state,labels', order_by: t.newest_first ? '-updated_at' : 'updated_at', ...(cursor ? { cursor } : {}) });
      return {
        url: `${trimBase(t.api_url)}/api/v1/workspaces/${encodeURIComponent(workspace)}/projects/${encodeURIComponent(projectId)}/issues/?${q}`,
        method: 'GET', headers: { accept: 'application/json', ...(t.token ? { 'x-api-key': t.token } : {}) },
      };
    },
    page(res, t) {
      return httpPage(res, () => {
        const b = obj(res.body);
        const items = Array.isArray(b.results) ? (b.results as unknown[]).map(obj) : [];
        // The API lists every state: before a first watermark only open tickets count, as with the other trackers.
        const tickets = items.map(planeTicket).filter((x) => t.sinceMs !== null || x.state === 'open');
        return { kind: 'page', tickets, next: b.next_page_results === true ? str(b.next_cursor) || null : null };
      });
    },
  },
};
