import MiniSearch from 'minisearch';
import { sectionsOf, type Post, type Section } from './content.ts';

/** One retrieved section, numbered for citations. */
export interface Hit {
  n: number;
  slug: string;
  title: string;
  heading: string;
  url: string;
  excerpt: string;
  score: number;
}

/** A local full-text index over the published posts' sections. */
export interface ContentIndex {
  /** Sections indexed; 0 means retrieval is unavailable. */
  readonly size: number;
  search(query: string, limit?: number): Hit[];
}

const EXCERPT = 400;

/** About `EXCERPT` characters of the section around the first query term it contains. */
export function excerptOf(text: string, terms: readonly string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= EXCERPT) return flat;
  const lower = flat.toLowerCase();
  const at = Math.min(...terms.map((t) => lower.indexOf(t.toLowerCase())).filter((i) => i >= 0), Number.MAX_SAFE_INTEGER);
  const start = at === Number.MAX_SAFE_INTEGER ? 0 : Math.max(0, at - EXCERPT / 4);
  const cut = flat.slice(start, start + EXCERPT);
  return `${start > 0 ? '…' : ''}${cut}${start + EXCERPT < flat.length ? '…' : ''}`;
}

/** Index the sections of every non-draft post (title and headings weigh more than body text). */
export function buildIndex(posts: readonly Post[]): ContentIndex {
  const sections = posts.filter((p) => !p.draft).flatMap(sectionsOf);
  const mini = new MiniSearch<Section>({
    fields: ['title', 'heading', 'text'],
    searchOptions: { boost: { title: 2, heading: 1.5 }, prefix: (t) => t.length >= 4, fuzzy: (t) => (t.length >= 5 ? 0.2 : false), combineWith: 'OR' },
  });
  mini.addAll(sections);
  const byId = new Map(sections.map((s) => [s.id, s]));
  return {
    size: sections.length,
    search(query, limit = 4) {
      const seen = new Set<string>();
      const hits: Hit[] = [];
      for (const r of mini.search(query)) {
        const s = byId.get(String(r.id));
        // One section per post at most: citations name distinct articles.
        if (!s || seen.has(s.slug)) continue;
        seen.add(s.slug);
        hits.push({ n: hits.length + 1, slug: s.slug, title: s.title, heading: s.heading, url: s.url, excerpt: excerptOf(s.text, r.terms), score: r.score });
        if (hits.length >= limit) break;
      }
      return hits;
    },
  };
}
