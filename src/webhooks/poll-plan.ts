// Startup-poll decisions (pure): which tickets of a page to deliver, when to stop, how long to back off, watermarks.
import type { Ticket } from './ticket.ts';

/** What one sweep over every enabled source did: tickets delivered, errors by source, sources cut short. */
export interface PollSweepResult {
  delivered: Record<string, number>;
  errors: Record<string, string>;
  timed_out: string[];
}

/** A ticket's change time (epoch ms), or null when it has none (such tickets are always delivered). */
export function ticketMs(t: Ticket): number | null {
  if (!t.updated_at) return null;
  const ms = Date.parse(t.updated_at);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The tickets of one page to deliver: those above the watermark `floorMs` (or without a time). With
 * `newestFirst` the page is in descending order and the scan stops at the first ticket at or below it.
 */
export function scanPage(tickets: readonly Ticket[], floorMs: number, newestFirst: boolean): { deliver: Ticket[]; stop: boolean } {
  const deliver: Ticket[] = [];
  for (const t of tickets) {
    const ms = ticketMs(t);
    if (ms === null || ms > floorMs) { deliver.push(t); continue; }
    if (newestFirst) return { deliver, stop: true };
  }
  return { deliver, stop: false };
}

/**
 * Seconds to wait before retry number `attempt` (1-based) of a rate-limited poll: the server's Retry-After
 * when it gave one, else `baseS · 2^(attempt−1)`; capped at `capS`; then jittered into [target/2, target].
 */
export function backoffS(attempt: number, retryAfterS: number | null, o: { baseS: number; capS: number; jitter: number }): number {
  const wanted = retryAfterS !== null && retryAfterS > 0 ? retryAfterS : o.baseS * 2 ** (attempt - 1);
  const target = Math.min(o.capS, wanted);
  return target / 2 + (Math.min(1, Math.max(0, o.jitter)) * target) / 2;
}

/** One line of the watermark file. */
export interface WatermarkLine {
  source: string;
  /** Epoch seconds of the newest ticket a complete poll delivered. */
  ts: number;
}

/** Watermarks (epoch ms) from the file's lines: the last line of each source wins; bad lines are skipped. */
export function foldWatermarks(lines: readonly unknown[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of lines) {
    const w = l as Partial<WatermarkLine> | null;
    if (w && typeof w.source === 'string' && typeof w.ts === 'number' && Number.isFinite(w.ts)) out.set(w.source, w.ts * 1000);
  }
  return out;
}

/** The newest change time among delivered tickets, never below `floorMs`. */
export function newestMs(tickets: readonly Ticket[], floorMs: number): number {
  let max = floorMs;
  for (const t of tickets) {
    const ms = ticketMs(t);
    if (ms !== null && ms > max) max = ms;
  }
  return max;
}
