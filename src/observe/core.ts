import type { Config } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { RouteContext } from '../lib/route.ts';
import type { BoardFeed } from './board-feed.ts';
import type { BoardSource } from './board-source.ts';
import type { ReadCache } from './read-cache.ts';
import type { RunsLedger } from './runs-ledger.ts';
import type { BoardView } from './status.ts';

/** What observe's routes share. */
export interface ObserveCore {
  source: BoardSource;
  feed: BoardFeed;
  ledger: RunsLedger;
  cache: ReadCache;
  clock: Clock;
  config: Config['observe'];
  version: string;
  startedMs: number;
}

/** One tenant's board now (the input of the status, dashboard and SLO builders). */
export function viewOf(core: ObserveCore, tenant: string): BoardView {
  return {
    tasks: core.source.ofTenant(tenant),
    counts: core.source.counts(tenant),
    sessions: core.source.sessions().filter((s) => s.tenant === tenant),
    costOf: (id) => core.ledger.costOf(id),
    progressOf: (id) => core.feed.progressOf(id),
    nowMs: core.clock.now(),
  };
}

/** Cache version of a snapshot: the board's change sequence and the current second. */
export const snapshotVersion = (core: ObserveCore): string => `${core.feed.ring.seq}:${Math.floor(core.clock.now() / 1000)}`;

/** Send a serialised JSON body (a cached snapshot) as the response. */
export function sendBody(ctx: RouteContext<unknown, unknown, unknown>, body: string, headers: Record<string, string> = {}): void {
  ctx.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store', ...headers }).end(body);
}
