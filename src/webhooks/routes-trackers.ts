// POST /webhooks/trackers/<adapter>: a tracker delivery, verified over its exact bytes, upserted once.
import { Type } from '../lib/typebox.ts';
import { defineRoute, reply, type Route } from '../lib/route.ts';
import { E, headerGet } from './http.ts';
import type { TrackerReceiver } from './receiver.ts';

const Params = Type.Object({ adapter: Type.String({ description: 'tracker_a…tracker_e, or jira, github, gitlab, linear, plane' }) });
const Received = Type.Object({
  status: Type.String({ description: 'accepted, or replay for a delivery id seen before (no effect)' }),
  delivery_id: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.Optional(Type.String({ description: 'What it did: created, updated, cancelled, noted, unchanged, ignored' })),
  task_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** The tracker receiver route. */
export function trackerRoutes(receive: TrackerReceiver): Route[] {
  return [
    defineRoute({
      method: 'POST', path: '/webhooks/trackers/:adapter', operationId: 'tracker_webhook', tags: ['webhooks'], access: 'hmac', rawBody: true,
      summary: 'Issue tracker delivery: verified over the raw bytes, deduplicated by delivery id, one task per ticket',
      params: Params,
      responses: {
        200: { description: 'Accepted or replay', schema: Received }, 400: E('Not a JSON object'), 401: E('Signature mismatch'),
        404: E('Unknown adapter'), 503: E('Webhook disabled or its secret empty'),
      },
      handler: async (ctx) => {
        const out = await receive(ctx.params.adapter, headerGet(ctx.req), ctx.raw ?? Buffer.alloc(0));
        return reply(out.status, out.body);
      },
    }),
  ];
}
