// The startup poll: each enabled source's list API, paged, retried from the top when rate limited, bounded by its deadline.
import type { Logger } from '../lib/log.ts';
import type { WebhookMetrics } from './metrics.ts';
import { backoffS, newestMs, scanPage, type PollSweepResult } from './poll-plan.ts';
import type { Ticket } from './ticket.ts';
import type { PageResult, PollTarget, TrackerAdapter } from './trackers/types.ts';
import type { Watermarks } from './watermarks.ts';

/** One source to poll: its adapter and `trackers.<name>.poll` settings, token resolved. */
export interface PollSource {
  /** Watermark key and metrics label (the adapter's canonical name). */
  name: string;
  adapter: TrackerAdapter;
  target: Omit<PollTarget, 'sinceMs' | 'nowMs'>;
  deadlineS: number;
  backoffCapS: number;
}

export interface PollDeps {
  fetch: typeof fetch;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1] (Math.random in the server). */
  jitter: () => number;
  watermarks: Watermarks;
  /** Upserts one ticket (on its id). */
  deliver: (t: Ticket) => Promise<unknown>;
  metrics: WebhookMetrics;
  log: Logger;
  maxAttempts?: number;
  backoffBaseS?: number;
  /** Aborting ends every poll as cut short (server stopping). */
  signal?: AbortSignal;
}

class RateLimited extends Error {
  constructor(readonly retryAfterS: number | null) { super('rate limited'); }
}
class OutOfTime extends Error {}
const MAX_PAGES = 10_000;

// One pass from the first page; `delivered` counts across passes (redelivery is an idempotent upsert).
async function pass(src: PollSource, deps: PollDeps, deadline: number, floor: number, count: { n: number }): Promise<{ complete: boolean; newest: number }> {
  let newest = floor;
  let cursor: string | null = null;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await fetchPage(src, deps, deadline, cursor, floor);
    if (page.kind === 'rate_limited') throw new RateLimited(page.retryAfterS);
    if (page.kind === 'error') throw new Error(page.message);
    const { deliver, stop } = scanPage(page.tickets, floor, src.target.newest_first);
    for (const t of deliver) {
      if (deps.now() >= deadline || deps.signal?.aborted) return { complete: false, newest };
      await deps.deliver(t);
      count.n++;
      newest = newestMs([t], newest);
    }
    if (deps.now() >= deadline) return { complete: false, newest };
    if (stop || !page.next) return { complete: true, newest };
    cursor = page.next;
  }
  throw new Error(`more than ${MAX_PAGES} pages`);
}

// One request, aborted at the deadline (or when the server stops).
async function fetchPage(src: PollSource, deps: PollDeps, deadline: number, cursor: string | null, floor: number): Promise<PageResult> {
  const left = deadline - deps.now();
  if (left <= 0) throw new OutOfTime();
  const target = { ...src.target, sinceMs: floor > 0 ? floor : null, nowMs: deps.now() };
  const req = src.adapter.poll.request(target, cursor);
  const signal = AbortSignal.any([AbortSignal.timeout(left), ...(deps.signal ? [deps.signal] : [])]);
  let res: Response;
  try {
    res = await deps.fetch(req.url, { method: req.method, headers: req.headers, ...(req.body ? { body: req.body } : {}), signal });
  } catch (err) {
    if (signal.aborted) throw new OutOfTime();
    throw err;
  }
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try { body = text ? JSON.parse(text) : null; } catch { /* a non-JSON answer reads as an empty page or an HTTP error */ }
  return src.adapter.poll.page({ status: res.status, header: (n) => res.headers.get(n) ?? undefined, body, nowMs: deps.now() }, target);
}

/** Poll one source: retried from the top on a rate limit; the watermark moves only after a complete pass. */
export async function pollSource(src: PollSource, deps: PollDeps, startMs: number): Promise<{ delivered: number; timedOut: boolean }> {
  const deadline = startMs + src.deadlineS * 1000;
  const count = { n: 0 };
  const attempts = deps.maxAttempts ?? 3;
  const floor = deps.watermarks.get(src.name);
  for (let attempt = 1; ; attempt++) {
    try {
      const { complete, newest } = await pass(src, deps, deadline, floor, count);
      if (complete) await deps.watermarks.advance(src.name, newest);
      return { delivered: count.n, timedOut: !complete };
    } catch (err) {
      if (err instanceof OutOfTime) return { delivered: count.n, timedOut: true };
      if (!(err instanceof RateLimited) || attempt >= attempts) throw Object.assign(err as Error, { delivered: count.n });
      const waitMs = backoffS(attempt, err.retryAfterS, { baseS: deps.backoffBaseS ?? 1, capS: src.backoffCapS, jitter: deps.jitter() }) * 1000;
      if (deps.now() + waitMs >= deadline) return { delivered: count.n, timedOut: true };
      deps.metrics.pollRetry(src.name);
      deps.log.info(`poll ${src.name}: rate limited, retrying from the first page in ${(waitMs / 1000).toFixed(1)} s`);
      await deps.sleep(waitMs, deps.signal ?? new AbortController().signal);
      if (deps.signal?.aborted) return { delivered: count.n, timedOut: true };
    }
  }
}

/** Poll every source at once; one source's failure or slowness never touches another's result. */
export async function pollSweep(sources: readonly PollSource[], deps: PollDeps): Promise<PollSweepResult> {
  const result: PollSweepResult = { delivered: {}, errors: {}, timed_out: [] };
  const start = deps.now();
  await Promise.all(sources.map(async (src) => {
    try {
      const r = await pollSource(src, deps, start);
      result.delivered[src.name] = r.delivered;
      if (r.timedOut) result.timed_out.push(src.name);
      deps.metrics.poll(src.name, r.timedOut ? 'timed_out' : 'completed', r.delivered);
    } catch (err) {
      const delivered = (err as { delivered?: number }).delivered ?? 0;
      result.delivered[src.name] = delivered;
      result.errors[src.name] = `${(err as Error).name}: ${(err as Error).message}`.slice(0, 500);
      deps.metrics.poll(src.name, 'error', delivered);
    }
  }));
  result.timed_out.sort();
  return result;
}
