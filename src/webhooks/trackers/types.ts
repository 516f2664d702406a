// What a tracker adapter is: its signature scheme and headers, its webhook payloads, its list API (pure).
import type { Ticket, TicketEvent } from '../ticket.ts';

/** How a delivery proves it comes from the tracker. */
export type Scheme = 'sha256-prefixed' | 'token' | 'raw-hex';

/** Header lookup by lower-case name (first value of a repeated header). */
export type HeaderGet = (name: string) => string | undefined;

/** The `trackers.<adapter>.poll` keys an adapter's list API reads, with the token already resolved. */
export interface PollTarget {
  api_url: string;
  project: string;
  token: string;
  newest_first: boolean;
  /**
   * The source's watermark (epoch ms), null before its first complete poll: with one, the request asks for
   * every ticket changed since (closed ones too, so closures missed while down are caught); without, open ones.
   */
  sinceMs: number | null;
  /** When the poll started (epoch ms). */
  nowMs: number;
}

/** One HTTP request of a poll. */
export interface PageRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** What came back for one page. */
export interface PageResponse {
  status: number;
  header: HeaderGet;
  body: unknown;
  /** When it arrived (epoch ms), for Retry-After dates and reset times. */
  nowMs: number;
}

/** The tickets of one page and the cursor of the next (null: last page); or a rate limit; or a failure. */
export type PageResult =
  | { kind: 'page'; tickets: Ticket[]; next: string | null }
  | { kind: 'rate_limited'; retryAfterS: number | null }
  | { kind: 'error'; message: string };

/** A tracker's documented list API, as pure request building and response reading. */
export interface PollApi {
  /** The request of the page at `cursor` (null: the first). */
  request(target: PollTarget, cursor: string | null): PageRequest;
  /** Read one response. */
  page(res: PageResponse, target: PollTarget): PageResult;
}

/** One built-in tracker. */
export interface TrackerAdapter {
  /** Canonical name (tracker_a…tracker_e). */
  name: string;
  /** The vendor name it is also reachable under. */
  vendor: string;
  scheme: Scheme;
  /** Header names carrying the signature (or token), lower case; the first present counts. */
  signatureHeaders: string[];
  /** Header names carrying the delivery id, lower case. */
  deliveryHeaders: string[];
  /** The event types it turns into ticket events, for docs/webhooks.md. */
  understands: string[];
  /** The ticket event of a parsed delivery, or null for an event it does not act on. */
  fromWebhook(body: Record<string, unknown>, header: HeaderGet): TicketEvent | null;
  poll: PollApi;
}
