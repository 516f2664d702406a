import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpError } from '../lib/http-error.ts';
import { siteError } from './errors.ts';

/** How /api/indexnow is gated and where it submits. */
export interface IndexNowSettings {
  /** Bearer the caller must present (SERVICE_INDEXNOW_TOKEN). */
  token?: string;
  /** NODE_ENV=production: no token then means 503, never "open". */
  production: boolean;
  /** The site's IndexNow key (SERVICE_INDEXNOW_KEY) and, optionally, where it is published. */
  key?: string;
  keyLocation?: string;
  /** Public origin whose /sitemap.xml lists the URLs (SERVICE_SITE_ORIGIN). */
  origin?: string;
  /** IndexNow endpoints; each receives every batch. */
  endpoints: string[];
  timeoutMs?: number;
}

/** Most URLs IndexNow accepts in one submission. */
export const BATCH = 10_000;
const SITEMAP_MAX_BYTES = 10 * 1024 * 1024;
const CHILD_SITEMAPS_MAX = 50;

const digest = (s: string) => createHash('sha256').update(s).digest();

/** 503 in production without a token, 401 for a missing or wrong bearer (compared in constant time), else null. */
export function checkTrigger(authorization: string | undefined, s: Pick<IndexNowSettings, 'token' | 'production'>): HttpError | null {
  if (!s.token) return s.production ? siteError(503, 'NOT_CONFIGURED', 'SERVICE_INDEXNOW_TOKEN is not set') : null;
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  // Hashing first makes the comparison length-independent.
  if (m && timingSafeEqual(digest(m[1]!.trim()), digest(s.token))) return null;
  return siteError(401, 'UNAUTHORIZED', 'Missing or invalid bearer token', { headers: { 'www-authenticate': 'Bearer' } });
}

const unescapeXml = (s: string) =>
  s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

/** The `<loc>` entries of a sitemap: page URLs, or child sitemaps when it is a sitemap index. */
export function sitemapLocs(xml: string): { urls: string[]; sitemaps: string[] } {
  const locs = [...xml.matchAll(/<loc>\s*(?:<!\[CDATA\[)?([\s\S]*?)(?:\]\]>)?\s*<\/loc>/gi)].map((m) => unescapeXml(m[1]!.trim())).filter(Boolean);
  return /<sitemapindex[\s>]/i.test(xml) ? { urls: [], sitemaps: locs } : { urls: locs, sitemaps: [] };
}

/** URLs of `host` only (IndexNow refuses a batch with another host), without duplicates, in batches. */
export function batchesFor(urls: readonly string[], host: string, size = BATCH): string[][] {
  const own = [...new Set(urls.filter((u) => URL.canParse(u) && new URL(u).host === host))];
  const out: string[][] = [];
  for (let i = 0; i < own.length; i += size) out.push(own.slice(i, i + size));
  return out;
}

/** The outcome of one batch at one endpoint. */
export interface SubmitResult {
  endpoint: string;
  status: number | null;
  ok: boolean;
  urls: number;
}

async function fetchText(url: string, timeoutMs: number): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/xml, text/xml' } });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  if (Number(res.headers.get('content-length') ?? 0) > SITEMAP_MAX_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${url} is larger than ${SITEMAP_MAX_BYTES} bytes`);
  }
  const text = await res.text();
  if (text.length > SITEMAP_MAX_BYTES) throw new Error(`${url} is larger than ${SITEMAP_MAX_BYTES} bytes`);
  return text;
}

/** Every page URL of the origin's sitemap (a sitemap index is followed one level). */
export async function readSitemap(origin: string, timeoutMs: number): Promise<string[]> {
  const top = sitemapLocs(await fetchText(new URL('/sitemap.xml', origin).href, timeoutMs));
  const children = await Promise.all(top.sitemaps.slice(0, CHILD_SITEMAPS_MAX).map(async (u) => sitemapLocs(await fetchText(u, timeoutMs)).urls));
  return [...top.urls, ...children.flat()];
}

/** Submit the sitemap's URLs; 502 when the sitemap cannot be read or every endpoint refused every batch. */
export async function submitSitemap(s: IndexNowSettings): Promise<{ submitted: number; results: SubmitResult[] }> {
  if (!s.key || !s.origin) throw siteError(503, 'NOT_CONFIGURED', `${s.key ? 'SERVICE_SITE_ORIGIN' : 'SERVICE_INDEXNOW_KEY'} is not set`);
  const timeoutMs = s.timeoutMs ?? 15_000;
  let urls: string[];
  try {
    urls = await readSitemap(s.origin, timeoutMs);
  } catch (err) {
    throw siteError(502, 'UPSTREAM_FAILED', `The sitemap could not be read: ${(err as Error).message}`);
  }
  const host = new URL(s.origin).host;
  const results: SubmitResult[] = [];
  for (const batch of batchesFor(urls, host)) {
    const body = JSON.stringify({ host, key: s.key, ...(s.keyLocation ? { keyLocation: s.keyLocation } : {}), urlList: batch });
    results.push(...await Promise.all(s.endpoints.map(async (endpoint) => {
      const status = await fetch(endpoint, { method: 'POST', body, signal: AbortSignal.timeout(timeoutMs), headers: { 'content-type': 'application/json; charset=utf-8' } })
        .then(async (r) => { await r.body?.cancel().catch(() => undefined); return r.status; }, () => null);
      return { endpoint, status, ok: status !== null && status >= 200 && status < 300, urls: batch.length };
    })));
  }
  if (results.length && results.every((r) => !r.ok)) throw siteError(502, 'UPSTREAM_FAILED', 'Every IndexNow submission failed', { details: results });
  // A URL counts as submitted once any endpoint accepted its batch (the engines share submissions).
  const submitted = sumAccepted(results, s.endpoints.length);
  return { submitted, results };
}

// Results come batch by batch, one per endpoint: a batch counts when one of its results is ok.
function sumAccepted(results: readonly SubmitResult[], perBatch: number): number {
  let n = 0;
  for (let i = 0; i < results.length; i += perBatch) {
    const batch = results.slice(i, i + perBatch);
    if (batch.some((r) => r.ok)) n += batch[0]!.urls;
  }
  return n;
}
