import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger, type Logger } from '../lib/log.ts';
import { sddLayout } from '../store/layout.ts';
import { trustedProxies } from '../server/client-ip.ts';
import { CliError, intArg, UsageError } from './args.ts';
import { command, type Values } from './command.ts';
import { ASSISTANT_LIMIT, startSite, type SiteOptions } from './site-runtime.ts';

const ARGS = {
  host: { type: 'string', description: 'Listen address (default 127.0.0.1, env SERVICE_SITE_HOST)' },
  port: { type: 'string', description: 'Port (default 8053, env SERVICE_SITE_PORT; 0 = any free port)' },
  content: { type: 'string', description: 'Folder of Markdown posts (front matter: slug, title, draft)' },
  'data-dir': { type: 'string', description: 'Subscribers and summary cache (default .sdd/site, never committed)' },
  'trust-proxy': { type: 'string', description: 'Comma-separated proxy addresses/CIDRs (or "loopback") whose X-Forwarded-For is believed' },
  origin: { type: 'string', description: 'Public origin whose /sitemap.xml IndexNow submits (env SERVICE_SITE_ORIGIN)' },
  'assistant-limit': { type: 'string', description: 'Assistant requests per window per client (default 30, env SERVICE_SITE_ASSISTANT_LIMIT)' },
  'assistant-window-ms': { type: 'string', description: 'Assistant window in ms (default 3600000, env SERVICE_SITE_ASSISTANT_WINDOW_MS)' },
  'log-json': { type: 'boolean', description: 'Log one JSON object per line' },
} as const;

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const str = (v: string | boolean | undefined) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

function urlOrUsage(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !/^https?:\/\//.test(value)) throw new UsageError(`${name} must be an http(s) URL, got '${value}'`);
  if (value !== undefined && !URL.canParse(value)) throw new UsageError(`${name} is not a valid URL: '${value}'`);
  return value;
}

/** SiteOptions from flags and environment; bad values are usage errors (exit 2). */
export function siteOptions(values: Values, env: NodeJS.ProcessEnv, log: Logger): SiteOptions {
  const root = resolve(String(values.workdir ?? process.cwd()));
  const content = str(values.content);
  if (content && !(existsSync(content) && statSync(content).isDirectory())) throw new UsageError(`--content: '${content}' is not a folder`);
  const trustProxy = list(str(values['trust-proxy']) ?? env.SERVICE_SITE_TRUST_PROXY);
  try { trustedProxies(trustProxy); } catch (err) { throw new UsageError(`--trust-proxy: ${(err as Error).message}`); }
  const smtpUrl = str(env.SERVICE_SITE_SMTP_URL), from = str(env.SERVICE_SITE_MAIL_FROM);
  if (smtpUrl && !from) throw new UsageError('SERVICE_SITE_MAIL_FROM is required with SERVICE_SITE_SMTP_URL');
  const model = {
    url: urlOrUsage('SERVICE_SITE_MODEL_URL', str(env.SERVICE_SITE_MODEL_URL)), key: str(env.SERVICE_SITE_MODEL_KEY), model: str(env.SERVICE_SITE_MODEL),
    timeoutMs: intArg('SERVICE_SITE_MODEL_TIMEOUT_MS', env.SERVICE_SITE_MODEL_TIMEOUT_MS, 100, 600_000),
  };
  return {
    host: str(values.host) ?? str(env.SERVICE_SITE_HOST) ?? '127.0.0.1',
    port: intArg('port', values.port ?? env.SERVICE_SITE_PORT, 0, 65535) ?? 8053,
    ...(content ? { contentDir: resolve(content) } : {}),
    dataDir: resolve(str(values['data-dir']) ?? sddLayout(root).site),
    trustProxy, model, log,
    ...(smtpUrl ? { smtp: { url: smtpUrl, from: from! } } : {}),
    indexnow: {
      token: str(env.SERVICE_INDEXNOW_TOKEN), production: env.NODE_ENV === 'production', key: str(env.SERVICE_INDEXNOW_KEY),
      keyLocation: str(env.SERVICE_INDEXNOW_KEY_LOCATION), origin: urlOrUsage('--origin', str(values.origin) ?? str(env.SERVICE_SITE_ORIGIN)),
      endpoints: list(env.SERVICE_INDEXNOW_ENDPOINT ?? 'https://api.indexnow.org/indexnow'),
    },
    assistant: {
      limit: intArg('assistant-limit', values['assistant-limit'] ?? env.SERVICE_SITE_ASSISTANT_LIMIT, 1, 1_000_000) ?? ASSISTANT_LIMIT.limit,
      windowMs: intArg('assistant-window-ms', values['assistant-window-ms'] ?? env.SERVICE_SITE_ASSISTANT_WINDOW_MS, 1000, 7 * 86_400_000) ?? ASSISTANT_LIMIT.windowMs,
    },
    sha: str(env.SERVICE_SITE_SHA) ?? null,
  };
}

function warnings(o: SiteOptions, log: Logger): void {
  if (!o.model.url || !o.model.model) log.warn('upstream model not configured (SERVICE_SITE_MODEL_URL, SERVICE_SITE_MODEL): summary, ask and summarise answer 503');
  if (!o.indexnow.token && !o.indexnow.production) log.warn('SERVICE_INDEXNOW_TOKEN is not set: /api/indexnow is open to anyone (NODE_ENV is not production)');
  if (!o.smtp) log.info('no SMTP server configured: /api/notify stores addresses and answers status "noop"');
}

/** `svc site`: serve the website host's public API until SIGINT/SIGTERM. */
export const siteCommand = command({ name: 'site', description: 'Serve the website host API (/api/*) on its own port' }, ARGS, async ({ values, env }) => {
  const log = createLogger({ json: Boolean(values['log-json']) });
  const opts = siteOptions(values, env, log);
  warnings(opts, log);
  const site = await startSite(opts).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') throw new CliError(`port ${opts.port} on ${opts.host} is already in use`);
    throw err;
  });
  const info = join(opts.dataDir, 'site.json');
  writeFileSync(info, JSON.stringify({ pid: process.pid, host: site.host, port: site.port, url: site.url, started_at: new Date().toISOString() }) + '\n');
  log.success(`svc site listening on ${site.url} (data in ${opts.dataDir}, ${site.deps.content.posts.size} posts)`);
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      log.info(`${signal}: stopping`);
      site.stop().catch((err) => log.error('shutdown failed', err)).finally(() => { rmSync(info, { force: true }); done(); });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  process.exit(0);
});
