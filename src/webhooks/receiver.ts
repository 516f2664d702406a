// The tracker receive pipeline: adapter, enabled, secret, signature, delivery id, replay, parse, ticket, upsert.
import { isUtf8 } from 'node:buffer';
import type { TrackerConfig } from '../config/index.ts';
import type { Logger } from '../lib/log.ts';
import { KeyedMutex } from '../lib/mutex.ts';
import type { Ledger } from './ledger.ts';
import type { WebhookMetrics } from './metrics.ts';
import { deliveryId, verifyDelivery, type TrackerRegistry } from './trackers/registry.ts';
import type { HeaderGet, TrackerAdapter } from './trackers/types.ts';
import type { TicketSink } from './upsert.ts';

/** What the receiver reads and writes. */
export interface ReceiverDeps {
  trackers: TrackerRegistry;
  /** `trackers` of the running configuration (re-read when config.yaml changes). */
  config: () => Record<string, TrackerConfig | undefined>;
  /** The value of an environment variable, read at each request so secrets rotate without a restart. */
  env: (name: string) => string | undefined;
  ledger: Ledger;
  sink: TicketSink;
  metrics: WebhookMetrics;
  log: Logger;
}

/** HTTP status and body of one delivery. */
export interface Received {
  status: number;
  body: { status: string; delivery_id: string | null; detail?: string; outcome?: string; task_id?: string | null };
}

/** The configuration of an adapter, under its canonical name or else its vendor name. */
export function adapterConfig(cfg: Record<string, TrackerConfig | undefined>, a: TrackerAdapter): TrackerConfig | undefined {
  return cfg[a.name] ?? cfg[a.vendor];
}

/** The receiver of POST /webhooks/trackers/<adapter>. */
export function trackerReceiver(deps: ReceiverDeps) {
  const mutex = new KeyedMutex();
  const refuse = (adapter: string, status: number, reason: string, detail: string, id: string | null = null): Received => {
    deps.metrics.rejected(adapter, reason);
    return { status, body: { status: reason, delivery_id: id, detail } };
  };
  const replay = (adapter: string, id: string): Received => {
    deps.metrics.replayed(adapter);
    return { status: 200, body: { status: 'replay', delivery_id: id } };
  };

  return async function receive(name: string, header: HeaderGet, raw: Buffer): Promise<Received> {
    const a = deps.trackers.find(name);
    if (!a) return refuse('unknown', 404, 'unknown_adapter', `Unknown tracker adapter '${name.slice(0, 64)}'`);
    const cfg = adapterConfig(deps.config(), a)?.webhook;
    if (!cfg?.enabled) return refuse(a.name, 503, 'disabled', `Tracker webhook ${a.name} is disabled: set trackers.${a.vendor}.webhook.enabled (or trackers.${a.name}) in .sdd/config.yaml`);
    const secret = cfg.secret_env ? deps.env(cfg.secret_env) ?? '' : '';
    if (!secret) return refuse(a.name, 503, 'not_configured', `Tracker webhook ${a.name} has no secret: set the environment variable named by its secret_env`);
    if (!(await verifyDelivery(a, secret, raw, header))) return refuse(a.name, 401, 'bad_signature', 'Invalid webhook signature');
    const id = deliveryId(a, raw, header);
    // Before parsing: a replay costs one lookup.
    if (deps.ledger.has(id)) return replay(a.name, id);
    const body = parseObject(raw);
    if (!body) return refuse(a.name, 400, 'bad_payload', 'Bad webhook payload: expected a JSON object', id);
    const ev = a.fromWebhook(body, header);
    if (!ev) {
      // Events it does not act on are remembered too, so their redeliveries answer replay.
      const fresh = await mutex.run(id, async () => {
        if (deps.ledger.has(id)) return false;
        await deps.ledger.record(id);
        return true;
      });
      if (!fresh) return replay(a.name, id);
      deps.metrics.accepted(a.name);
      deps.metrics.outcome(a.name, 'ignored');
      return { status: 200, body: { status: 'accepted', delivery_id: id, outcome: 'ignored', task_id: null } };
    }
    const result = await deps.sink.apply(ev, { seen: () => deps.ledger.has(id), done: (taskId) => deps.ledger.record(id, taskId ? { task_id: taskId } : {}) });
    if (result.outcome === 'replay') return replay(a.name, id);
    deps.metrics.accepted(a.name);
    deps.metrics.outcome(a.name, result.outcome);
    return { status: 200, body: { status: 'accepted', delivery_id: id, outcome: result.outcome, task_id: result.taskId } };
  };
}
export type TrackerReceiver = ReturnType<typeof trackerReceiver>;

/** The body as a JSON object (empty counts as {}), or null when it is not one. */
export function parseObject(raw: Buffer): Record<string, unknown> | null {
  if (raw.length === 0) return {};
  if (!isUtf8(raw)) return null;
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
