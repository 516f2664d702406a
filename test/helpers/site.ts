// The website host in-process over temp folders (content, data) with a manual clock, plus an HTTP
// client that can speak from any loopback address and a forwarding proxy for --trust-proxy tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startSite, type RunningSite, type SiteOptions } from '../../src/cli/site-runtime.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { makeTempDir } from './repo.ts';

/** Three posts: two published, one draft. */
export const POSTS: Record<string, string> = {
  'worktrees.md': '---\nslug: git-worktrees\ntitle: Agents in git worktrees\n---\n# Agents in git worktrees\n\nEvery agent works in its own worktree.\n\n## Why worktrees\n\nA worktree gives each agent a private checkout on branch agent/<session>, so two agents never clobber each other.\n\n## Merging\n\nVerified work is merged into the base branch after the quality gates pass.\n',
  'limits.md': '---\nslug: rate-limits\ntitle: Rate limits that hold\ndraft: false\n---\nA sliding window counts requests per client address.\n\n## Proxies\n\nForwarding headers are believed only from trusted proxies.\n',
  'secret.md': '---\nslug: unreleased-plans\ntitle: Unreleased plans\ndraft: true\n---\nThe roadmap for the quantum scheduler.\n',
};

export interface TestSite extends RunningSite {
  clock: ReturnType<typeof manualClock>;
  dataDir: string;
  contentDir: string;
  cleanup(): Promise<void>;
}

/** Start the site with posts, a manual clock and a silent log; `patch` adjusts the options. */
export async function startTestSite(patch: (o: SiteOptions) => void = () => undefined, posts: Record<string, string> = POSTS): Promise<TestSite> {
  const tmp = makeTempDir('svc-site-');
  const contentDir = join(tmp.dir, 'content'), dataDir = join(tmp.dir, 'data');
  mkdirSync(contentDir);
  for (const [name, text] of Object.entries(posts)) writeFileSync(join(contentDir, name), text);
  const clock = manualClock();
  const opts: SiteOptions = {
    host: '127.0.0.1', port: 0, contentDir, dataDir, trustProxy: [], model: {}, log: silentLogger(), clock,
    indexnow: { production: false, endpoints: [] },
  };
  patch(opts);
  const site = await startSite(opts);
  return { ...site, clock, dataDir, contentDir, cleanup: async () => { await site.stop(); tmp.cleanup(); } };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** One HTTP request with node:http, optionally from a given local address (127.x.y.z). */
export function call(url: string, path: string, opts: { method?: string; body?: unknown; headers?: Record<string, string>; from?: string; timeoutMs?: number } = {}): Promise<Answer> {
  const u = new URL(path, url);
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : JSON.stringify(opts.body);
  const headers = { ...(body !== undefined && !Buffer.isBuffer(body) && typeof opts.body !== 'string' ? { 'content-type': 'application/json' } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: opts.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(opts.from ? { localAddress: opts.from } : {}), agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    // A test never waits forever: a hung answer fails the test instead.
    req.setTimeout(opts.timeoutMs ?? 10_000, () => req.destroy(new Error(`no answer from ${path} in ${opts.timeoutMs ?? 10_000} ms`)));
    req.end(body);
  });
}

/** The events of an SSE body: `{event, data}` with data parsed as JSON. */
export function sseEvents(text: string): { event: string; data: any }[] {
  return text.split(/\n\n/).filter((b) => /^(event|data):/m.test(b)).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
    const data = [...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join('\n');
    return { event, data: JSON.parse(data) };
  });
}

/**
 * A forwarding proxy like nginx with `$proxy_add_x_forwarded_for`: it appends the peer it sees to
 * X-Forwarded-For and connects to the site from `localAddress` (the address the site trusts).
 */
export async function startProxy(target: string, localAddress: string): Promise<{ url: string; close(): Promise<void> }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const peer = req.socket.remoteAddress ?? '';
    const xff = req.headers['x-forwarded-for'] ? `${req.headers['x-forwarded-for']}, ${peer}` : peer;
    const up = request({ host: t.hostname, port: t.port, path: req.url, method: req.method, localAddress, agent: false, headers: { ...req.headers, 'x-forwarded-for': xff } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
