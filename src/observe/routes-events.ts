import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '../lib/typebox.ts';
import { defineRoute, RAW, type Route } from '../lib/route.ts';
import type { BoardFeed } from './board-feed.ts';
import type { BoardSource } from './board-source.ts';
import type { Change } from './changes.ts';

/** The part of an SSE response the stream uses (src/server/sse.ts `openSse` returns one). */
export interface SseStream {
  send(id: string | number | null, event: string | null, data: unknown): void;
  comment(text: string): void;
  onClose(fn: () => void): void;
  close(): void;
  readonly closed: boolean;
}
export type OpenSse = (req: IncomingMessage, res: ServerResponse, opts?: { pingMs?: number; retryMs?: number }) => SseStream;

export interface EventRouteDeps {
  source: BoardSource;
  feed: BoardFeed;
  openSse: OpenSse;
  pingMs: number;
  /** Bytes a client may fall behind before it is disconnected (it resumes with Last-Event-ID). */
  maxBufferBytes: number;
}

const EventsQuery = Type.Object({
  tenant: Type.Optional(Type.String()),
  last_event_id: Type.Optional(Type.String({ maxLength: 32, description: 'Resume after this change (for clients that cannot set the Last-Event-ID header)' })),
});

/** The sequence number a client resumes after: the Last-Event-ID header, else ?last_event_id; null when neither is given. */
export function resumeFrom(header: string | string[] | undefined, query: string | undefined): number | null {
  const raw = (Array.isArray(header) ? header[0] : header) ?? query;
  if (raw === undefined || raw.trim() === '') return null;
  return /^\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : -1;
}

/** GET /events: board changes as server-sent events, resumable with Last-Event-ID. */
export function eventRoutes(d: EventRouteDeps): Route[] {
  return [defineRoute({
    method: 'GET', path: '/events', operationId: 'board_events', tags: ['observability'], access: 'read', query: EventsQuery,
    summary: 'Board changes as server-sent events (task_created, task_updated, agent_started, agent_exited; reset when a resume is too old)',
    responses: { 200: { description: 'text/event-stream; `id:` is the change sequence number', contentType: 'text/event-stream' } },
    handler: (ctx) => {
      const { tenant } = ctx.who;
      const after = resumeFrom(ctx.req.headers['last-event-id'], (ctx.query as { last_event_id?: string }).last_event_id);
      const sse = d.openSse(ctx.req, ctx.res, { pingMs: d.pingMs, retryMs: 1000 });
      const send = (c: Change) => {
        if (c.tenant !== tenant) return;
        // A client that cannot keep up is let go: its reconnect resumes from its last id (or gets a reset).
        if (ctx.res.writableLength > d.maxBufferBytes) { sse.close(); return; }
        sse.send(c.seq, c.event, c.data);
      };
      // Replay and subscribe with no await between them: no change can fall in the gap.
      sse.comment(`seq ${d.feed.ring.seq}`);
      if (after !== null) {
        const since = d.feed.ring.since(after);
        if (since.kind === 'reset') sse.send(since.seq, 'reset', { seq: since.seq, reason: 'the changes after your last event id are no longer held: fetch /dashboard/data again' });
        else for (const c of since.changes) send(c);
      }
      const off = d.feed.subscribe(send);
      sse.onClose(off);
      return RAW;
    },
  })];
}
