// Builds the inbound webhooks of a server: ledgers, receivers, routes, and the startup poll.
import type { Registry } from 'prom-client';
import type { TrackerConfig } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Route } from '../lib/route.ts';
import type { SddLayout } from '../store/index.ts';
import { Background } from './http.ts';
import { openLedger } from './ledger.ts';
import { webhookMetrics } from './metrics.ts';
import { pollSweep, type PollSource } from './poll.ts';
import type { PollSweepResult } from './poll-plan.ts';
import { adapterConfig, trackerReceiver } from './receiver.ts';
import { chatRoutes } from './routes-chat.ts';
import { hookRoutes, type HookSessions } from './routes-hooks.ts';
import { trackerRoutes } from './routes-trackers.ts';
import type { TaskPort } from './tasks.ts';
import { trackerRegistry } from './trackers/registry.ts';
import type { TrackerAdapter } from './trackers/types.ts';
import { ticketSink } from './upsert.ts';
import { openWatermarks } from './watermarks.ts';

export interface WebhooksDeps {
  layout: SddLayout;
  tasks: TaskPort;
  /** `trackers` of the running configuration, read at each use (config.yaml reloads reach it). */
  config: () => Record<string, TrackerConfig | undefined>;
  env: (name: string) => string | undefined;
  clock: Clock;
  log: Logger;
  /** The /metrics registry. */
  registry?: Registry;
  sessions: HookSessions;
  fetch?: typeof fetch;
  /** Adapters shipped outside the core. */
  extraTrackers?: TrackerAdapter[];
  chatSigningSecret?: string;
  chatAckMs?: number;
}

/** The webhooks of one server. */
export interface Webhooks {
  routes: Route[];
  /** One poll of every source with `poll.enabled`, at once; resolves with what each did. */
  startupPoll(): Promise<PollSweepResult>;
  /** The log lines that tell where each enabled tracker should send its deliveries. */
  setupHints(serverUrl: string): string[];
  /** Cut the poll short, wait for work behind answers, close the files. */
  close(): Promise<void>;
}

/** Open the ledgers and watermarks under `.sdd/runtime` and build the routes. */
export async function createWebhooks(deps: WebhooksDeps): Promise<Webhooks> {
  const log = deps.log;
  const nowS = () => deps.clock.now() / 1000;
  const ledger = await openLedger(deps.layout.trackerLedger, { nowS, log });
  const chatLedger = await openLedger(deps.layout.chatLedger, { nowS, log });
  const watermarks = await openWatermarks(deps.layout.pollWatermarks, log);
  const metrics = webhookMetrics(deps.registry);
  const trackers = trackerRegistry(deps.extraTrackers);
  const sink = ticketSink({ tasks: deps.tasks, log });
  const background = new Background();
  const stopping = new AbortController();
  const receive = trackerReceiver({ trackers, config: deps.config, env: deps.env, ledger, sink, metrics, log });
  const routes = [
    ...chatRoutes({ env: deps.env, ...(deps.chatSigningSecret ? { signingSecret: deps.chatSigningSecret } : {}), clock: deps.clock, ledger: chatLedger, tasks: deps.tasks, metrics, log, background, ...(deps.chatAckMs ? { ackMs: deps.chatAckMs } : {}) }),
    ...trackerRoutes(receive),
    ...hookRoutes({ env: deps.env, clock: deps.clock, tasks: deps.tasks, sessions: deps.sessions, metrics }),
  ];
  const enabled = (pick: (c: TrackerConfig) => boolean) =>
    trackers.all.map((a) => ({ a, c: adapterConfig(deps.config(), a) })).filter((x): x is { a: TrackerAdapter; c: TrackerConfig } => !!x.c && pick(x.c));

  return {
    routes,
    startupPoll: () => background.track(pollSweep(pollSources(enabled((c) => c.poll.enabled), deps), {
      fetch: deps.fetch ?? fetch, now: () => deps.clock.now(), sleep: abortableSleep, jitter: Math.random, watermarks,
      deliver: (ticket) => sink.apply({ action: 'polled', ticket }).then((r) => metrics.outcome(ticket.adapter, r.outcome)),
      metrics, log, signal: stopping.signal,
    })),
    setupHints: (serverUrl) => [
      ...enabled((c) => c.webhook.enabled).map(({ a, c }) =>
        `tracker ${a.name} (${a.vendor}): deliveries to ${(c.webhook.public_url_base || serverUrl).replace(/\/+$/, '')}/webhooks/trackers/${a.vendor}` +
        (c.webhook.secret_env && deps.env(c.webhook.secret_env) ? '' : ` -- its secret_env ${c.webhook.secret_env || '(unset)'} is empty, deliveries answer 503`)),
      ...Object.keys(deps.config()).filter((k) => !trackers.find(k)).map((k) => `trackers.${k} in config.yaml names no tracker adapter (known: ${trackers.all.map((a) => `${a.name}/${a.vendor}`).join(', ')})`),
    ],
    async close() {
      stopping.abort();
      await background.idle();
      await Promise.all([ledger.close(), chatLedger.close(), watermarks.close()]);
    },
  };
}

// The sources of the sweep; one without an api_url or project is skipped with a warning.
function pollSources(list: { a: TrackerAdapter; c: TrackerConfig }[], deps: WebhooksDeps): PollSource[] {
  const out: PollSource[] = [];
  for (const { a, c } of list) {
    const p = c.poll;
    if (!p.api_url || !p.project) { deps.log.warn(`trackers.${a.vendor}.poll: api_url and project are needed; not polled`); continue; }
    const token = p.token_env ? deps.env(p.token_env) ?? '' : '';
    out.push({ name: a.name, adapter: a, target: { api_url: p.api_url, project: p.project, token, newest_first: p.newest_first }, deadlineS: p.deadline_s, backoffCapS: p.backoff_cap_s });
  }
  return out;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
    signal.addEventListener('abort', done, { once: true });
  });
}
