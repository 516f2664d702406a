// Reading loosely typed tracker JSON safely (pure): strings, objects, label lists, times, rate limits.
import type { HeaderGet, PageResponse, PageResult } from './types.ts';

export type Json = Record<string, unknown>;

/** The value as an object, or {} (arrays and null are not objects here). */
export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** The value as a string: strings as they are, finite numbers written out, anything else ''. */
export const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** The first non-empty string among the values. */
export const first = (...vs: unknown[]): string => vs.map(str).find((s) => s !== '') ?? '';

/** Label names from a list of strings or of objects with `name` (or `title`), or a `{nodes: […]}` connection. */
export function labelNames(v: unknown): string[] {
  const list = Array.isArray(v) ? v : Array.isArray(obj(v).nodes) ? (obj(v).nodes as unknown[]) : [];
  return list.map((l) => (typeof l === 'string' ? l : first(obj(l).name, obj(l).title))).filter((s) => s !== '');
}

/**
 * A tracker time as ISO-8601 UTC, or null: ISO strings, `+0000` offsets (Jira), `2026-11-20 10:00:00 UTC`
 * (GitLab hooks) and epoch milliseconds.
 */
export function isoTime(v: unknown): string | null {
  let ms: number;
  if (typeof v === 'number' && Number.isFinite(v)) ms = v;
  else if (typeof v === 'string' && v.trim()) {
    const s = v.trim().replace(/ UTC$/, 'Z').replace(/^(\d{4}-\d\d-\d\d) /, '$1T').replace(/([+-]\d\d)(\d\d)$/, '$1:$2');
    ms = Date.parse(s);
  } else return null;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Plain text of an Atlassian Document Format value (Jira v3 descriptions), or the string itself. */
export function docText(v: unknown): string {
  if (typeof v === 'string') return v;
  const out: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > 64) return;
    const n = obj(node);
    if (typeof n.text === 'string') out.push(n.text);
    if (n.type === 'hardBreak') out.push('\n');
    const content = Array.isArray(n.content) ? n.content : [];
    content.forEach((c) => walk(c, depth + 1));
    if (n.type === 'paragraph' || n.type === 'heading' || n.type === 'listItem') out.push('\n');
  };
  walk(v, 0);
  return out.join('').trim();
}

/** HTML reduced to text (Plane's description_html when no stripped form is sent). */
export const htmlText = (html: string): string =>
  html.replace(/<br\s*\/?>|<\/p>/gi, '\n').replace(/<[^>]*>/g, '').replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').trim();

/** Seconds a Retry-After header asks for (delta seconds or an HTTP date against `nowMs`), else null. */
export function retryAfterS(header: HeaderGet, nowMs: number): number | null {
  const v = header('retry-after')?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : null;
}

/** The usual reading of a list response: 429 → rate limited, other non-2xx → error, else the page. */
export function httpPage(res: PageResponse, ok: () => PageResult): PageResult {
  if (res.status === 429) return { kind: 'rate_limited', retryAfterS: retryAfterS(res.header, res.nowMs) };
  if (res.status < 200 || res.status > 299) return { kind: 'error', message: `HTTP ${res.status}` };
  return ok();
}

/** The URL of the `rel="next"` entry of a Link header (RFC 8288), else null. */
export function linkNext(link: string | undefined): string | null {
  for (const part of (link ?? '').split(',')) {
    const m = /<([^>]+)>\s*;(.*)$/.exec(part.trim());
    if (m && /\brel="?next"?/.test(m[2]!)) return m[1]!;
  }
  return null;
}

/** `base` without trailing slashes. */
export const trimBase = (base: string): string => base.replace(/\/+$/, '');
