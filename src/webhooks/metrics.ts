// Counters of the inbound webhooks and startup polls, per adapter, on the server's /metrics registry.
import { Counter, Registry } from 'prom-client';

/** Where the receivers and pollers count what they did. */
export interface WebhookMetrics {
  accepted(adapter: string): void;
  replayed(adapter: string): void;
  rejected(adapter: string, reason: string): void;
  /** What an accepted ticket event did to its task (created, updated, cancelled, noted, unchanged, ignored). */
  outcome(adapter: string, outcome: string): void;
  /** One poll of a source ended: completed, timed_out or error, with the tickets it delivered. */
  poll(adapter: string, result: 'completed' | 'timed_out' | 'error', tickets: number): void;
  /** A rate-limited poll will be retried from the top. */
  pollRetry(adapter: string): void;
}

/** Counters registered on `registry` (a private one when none is given, e.g. in tests). */
export function webhookMetrics(registry: Registry = new Registry()): WebhookMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const accepted = counter('svc_webhook_deliveries_accepted_total', 'Inbound webhook deliveries accepted (verified, parsed, new), by adapter', ['adapter']);
  const replayed = counter('svc_webhook_deliveries_replayed_total', 'Inbound webhook deliveries answered as replays (no effect), by adapter', ['adapter']);
  const rejected = counter('svc_webhook_deliveries_rejected_total', 'Inbound webhook deliveries refused, by adapter and reason', ['adapter', 'reason']);
  const outcomes = counter('svc_webhook_ticket_outcomes_total', 'What accepted deliveries and polled tickets did to their task, by adapter and outcome', ['adapter', 'outcome']);
  const polls = counter('svc_tracker_polls_total', 'Startup polls of tracker list APIs, by adapter and result (completed, timed_out, error)', ['adapter', 'result']);
  const polled = counter('svc_tracker_poll_tickets_total', 'Tickets delivered by startup polls, by adapter', ['adapter']);
  const retries = counter('svc_tracker_poll_retries_total', 'Rate-limited startup polls retried from the top, by adapter', ['adapter']);
  return {
    accepted: (adapter) => accepted.inc({ adapter }),
    replayed: (adapter) => replayed.inc({ adapter }),
    rejected: (adapter, reason) => rejected.inc({ adapter, reason }),
    outcome: (adapter, outcome) => outcomes.inc({ adapter, outcome }),
    poll: (adapter, result, tickets) => { polls.inc({ adapter, result }); polled.inc({ adapter }, tickets); },
    pollRetry: (adapter) => retries.inc({ adapter }),
  };
}
