import type { ChatMessage } from './model.ts';
import type { Hit } from './search.ts';

/** A source passed to the model: retrieved by /api/ask, or sent by the visitor to /api/ask/summarise. */
export interface Source {
  title: string;
  excerpt: string;
  url?: string;
}

/** What the visitor sees for a question the content does not cover (no model call is made). */
export const NO_MATCH = 'I could not find anything about that in the published articles.';

const numbered = (sources: readonly Source[]) =>
  sources.map((s, i) => `[${i + 1}] ${s.title}${s.url ? ` (${s.url})` : ''}\n${s.excerpt}`).join('\n\n');

/** The chat messages of /api/ask: answer from the numbered sources only, citing them as [n]. */
export function askMessages(query: string, hits: readonly Hit[]): ChatMessage[] {
  return [
    { role: 'system', content: 'You answer questions about the articles of this website using only the numbered sources given. Cite the sources you use as [1], [2]. If the sources do not answer the question, say so briefly. Be concise.' },
    { role: 'user', content: `Sources:\n\n${numbered(hits.map((h) => ({ title: h.heading ? `${h.title}: ${h.heading}` : h.title, excerpt: h.excerpt, url: h.url })))}\n\nQuestion: ${query}` },
  ];
}

/** The chat messages of /api/ask/summarise: a two or three sentence summary of the given hits. */
export function summariseMessages(query: string, sources: readonly Source[]): ChatMessage[] {
  return [
    { role: 'system', content: 'Summarise what the numbered sources say about the question in two or three sentences. Cite the sources you use as [1], [2]. Use only the sources.' },
    { role: 'user', content: `Sources:\n\n${numbered(sources)}\n\nQuestion: ${query}` },
  ];
}

/** Distinct source numbers cited as [n] (also [1, 2]) in `text`, in order of first mention, within 1..count. */
export function citedNumbers(text: string, count: number): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    for (const part of m[1]!.split(',')) {
      const n = Number(part.trim());
      if (n >= 1 && n <= count && !out.includes(n)) out.push(n);
    }
  }
  return out;
}

/** The citation frame of /api/ask: the hits the answer cited, or every hit when it cited none. */
export function citationsFor(answer: string, hits: readonly Hit[]): { n: number; title: string; heading: string; url: string; slug: string }[] {
  const cited = citedNumbers(answer, hits.length);
  const chosen = cited.length ? cited.map((n) => hits[n - 1]!) : hits;
  return chosen.map((h) => ({ n: h.n, title: h.title, heading: h.heading, url: h.url, slug: h.slug }));
}
