import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { TSchema } from '../lib/typebox.ts';
import type { Route } from '../lib/route.ts';
import type { Post } from './content.ts';
import type { SiteOutgoing } from './errors.ts';
import type { IndexNowSettings } from './indexnow.ts';
import type { WindowLimiter } from './limiter.ts';
import type { ModelClient } from './model.ts';
import type { Subscribers } from './notify.ts';
import type { ContentIndex } from './search.ts';
import type { SummaryCache } from './summary.ts';

/**
 * A website route record: a task-server route plus what the public site needs around it. The site app
 * (src/server/site-app.ts) runs `guard` before reading the body and shapes every error with `shapeError`.
 */
export type SiteRoute = Route & {
  /** Body cap in bytes for this route (default: the app's). */
  bodyLimit?: number;
  /** Runs with the client address before the body is read (limiters); throws to refuse. */
  guard?: (ip: string) => void;
  /** The error body of this route (default: the envelope `{ok:false, error:{code, message}}`). */
  shapeError?: (out: SiteOutgoing) => SiteOutgoing;
};

/** Keeps the schema types for the handler (like `defineRoute`), with the site's extra members. */
export function defineSiteRoute<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema>(
  r: Route<P, Q, B> & Pick<SiteRoute, 'bodyLimit' | 'guard' | 'shapeError'>,
): SiteRoute {
  return r as unknown as SiteRoute;
}

/** The part of an SSE response the ask route uses (src/server/sse.ts `openSse` returns one). */
export interface SseLike {
  send(id: string | number | null, event: string | null, data: unknown): void;
  readonly closed: boolean;
  onClose(fn: () => void): void;
  close(): void;
}

/** The published posts: by slug (drafts included, for the 404 rule) and the retrieval index. */
export interface Content {
  posts: Map<string, Post>;
  index: ContentIndex;
}

/** Everything the website routes use, built by `svc site` (src/cli/site-runtime.ts). */
export interface SiteDeps {
  clock: Clock;
  log: Logger;
  version: string;
  /** Deployed revision shown by /api/health (SERVICE_SITE_SHA), null when unknown. */
  sha: string | null;
  content: Content;
  model: ModelClient;
  summaries: SummaryCache;
  subscribers: Subscribers;
  indexnow: IndexNowSettings;
  limiters: { notify: WindowLimiter; assistant: WindowLimiter; csp: WindowLimiter };
  openSse: (req: IncomingMessage, res: ServerResponse, opts?: { pingMs?: number }) => SseLike;
}
