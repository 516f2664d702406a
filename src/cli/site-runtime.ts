import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { createSiteServer, type SiteServer } from '../server/site-app.ts';
import { trustedProxies } from '../server/client-ip.ts';
import { openSse } from '../server/sse.ts';
import {
  assistantRoutes, buildIndex, createModelClient, createSmtpMailer, createWindowLimiter, loadPosts, siteRoutes, Subscribers, SummaryCache,
  type IndexNowSettings, type ModelSettings, type SiteDeps, type SmtpSettings,
} from '../site/index.ts';
import { VERSION } from './version.ts';

/** The limits of the contract: notify 5 per 10 minutes, CSP reports 60 per 10 minutes, per client. */
export const NOTIFY_LIMIT = { limit: 5, windowMs: 10 * 60_000 };
export const CSP_LIMIT = { limit: 60, windowMs: 10 * 60_000 };
/** The shared assistant limiter's default: 30 per hour. */
export const ASSISTANT_LIMIT = { limit: 30, windowMs: 60 * 60_000 };

/** Everything `svc site` decides from flags and environment, as plain values (tests build it directly). */
export interface SiteOptions {
  host: string;
  port: number;
  /** Markdown posts; unset = no articles (summary 404, ask answers "retrieval unavailable"). */
  contentDir?: string;
  dataDir: string;
  trustProxy: string[];
  model: ModelSettings;
  smtp?: SmtpSettings;
  indexnow: IndexNowSettings;
  assistant?: { limit: number; windowMs: number };
  sha?: string | null;
  clock?: Clock;
  log: Logger;
}

export interface RunningSite {
  url: string;
  host: string;
  port: number;
  deps: SiteDeps;
  app: SiteServer;
  stop(): Promise<void>;
}

/** Load the content, open the data folder and start the website host. */
export async function startSite(o: SiteOptions): Promise<RunningSite> {
  const clock = o.clock ?? systemClock;
  const trusted = trustedProxies(o.trustProxy);
  await mkdir(o.dataDir, { recursive: true, mode: 0o700 });
  // Subscriber addresses must never land in the user's own commits, wherever the folder is.
  await writeFile(join(o.dataDir, '.gitignore'), '*\n', { flag: 'wx' }).catch(() => undefined);
  const { posts, skipped } = o.contentDir ? await loadPosts(o.contentDir) : { posts: [], skipped: [] };
  for (const s of skipped) o.log.warn(`content: skipped ${s}`);
  const model = createModelClient(o.model);
  const mailer = o.smtp ? createSmtpMailer(o.smtp) : null;
  const subscribers = await Subscribers.open(o.dataDir, { clock, mailer, log: o.log });
  const deps: SiteDeps = {
    clock, log: o.log, version: VERSION, sha: o.sha ?? null,
    content: { posts: new Map(posts.map((p) => [p.slug, p])), index: buildIndex(posts) },
    model, subscribers, indexnow: o.indexnow,
    summaries: new SummaryCache({ dir: join(o.dataDir, 'summaries'), model, clock, log: o.log }),
    limiters: {
      notify: createWindowLimiter({ ...NOTIFY_LIMIT, clock }),
      csp: createWindowLimiter({ ...CSP_LIMIT, clock }),
      assistant: createWindowLimiter({ ...(o.assistant ?? ASSISTANT_LIMIT), clock }),
    },
    openSse,
  };
  const app = createSiteServer({ routes: [...siteRoutes(deps), ...assistantRoutes(deps)], log: o.log.withTag('http'), trusted });
  let bound;
  try {
    bound = await app.listen(o.port, o.host);
  } catch (err) {
    mailer?.close();
    await subscribers.close();
    throw err;
  }
  const url = `http://${bound.host.includes(':') ? `[${bound.host}]` : bound.host}:${bound.port}`;
  return {
    url, host: bound.host, port: bound.port, deps, app,
    async stop() {
      await app.close();
      mailer?.close();
      await subscribers.close();
    },
  };
}
