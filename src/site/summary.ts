import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static, Value } from '../lib/typebox.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { stableStringify, writeFileAtomic } from '../store/index.ts';
import type { Post } from './content.ts';
import { ModelError, type ChatMessage, type ModelClient } from './model.ts';

export const MODES = ['quick', 'takeaways', 'technical'] as const;
export type Mode = (typeof MODES)[number];

const Items = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 4 });
/** What the model is asked to return. */
const ModelAnswer = Type.Object({ format: Type.Union([Type.Literal('bullets'), Type.Literal('paragraphs')]), items: Items, whyItMatters: Type.String() });

/** The summary of one article in one mode, as /api/blog/summary answers it. */
export const ArticleSummary = Type.Object({
  title: Type.String(), format: Type.Union([Type.Literal('bullets'), Type.Literal('paragraphs')]), items: Items,
  whyItMatters: Type.String(), mode: Type.Union(MODES.map((m) => Type.Literal(m))), model: Type.String(), cached: Type.Boolean(),
}, { $id: 'ArticleSummary' });
export type ArticleSummary = Static<typeof ArticleSummary>;

const ASK: Record<Mode, string> = {
  quick: 'Give 3 short bullet points a busy reader can scan in ten seconds (format "bullets").',
  takeaways: 'Give the 4 most important takeaways as bullet points (format "bullets").',
  technical: 'Give 2 or 3 short paragraphs for an engineer: mechanisms, trade-offs, numbers (format "paragraphs").',
};
/** Longest article text sent to the model (characters); longer posts are cut. */
const ARTICLE_MAX = 24_000;

/** The chat messages that ask for a summary of `post` in `mode`. */
export function summaryMessages(post: Post, mode: Mode): ChatMessage[] {
  return [
    { role: 'system', content: `You summarise blog articles. ${ASK[mode]} Answer with one JSON object only: {"format": "bullets" | "paragraphs", "items": [1 to 4 strings], "whyItMatters": one sentence}. No text outside the JSON.` },
    { role: 'user', content: `Title: ${post.title}\n\n${post.text.slice(0, ARTICLE_MAX)}` },
  ];
}

/** The model's JSON answer (code fences tolerated), checked; anything else fails as `upstream`. */
export function parseSummaryAnswer(text: string): Static<typeof ModelAnswer> {
  const start = text.indexOf('{'), end = text.lastIndexOf('}');
  let json: unknown;
  try { json = JSON.parse(text.slice(start, end + 1)); } catch { throw new ModelError('upstream', 'the model did not answer with JSON'); }
  if (!Value.Check(ModelAnswer, json)) throw new ModelError('upstream', 'the model answer does not have the summary shape');
  return { format: json.format, items: json.items, whyItMatters: json.whyItMatters };
}

/** Summaries cached in `<dataDir>/summaries/<sha256 of the text>.<mode>.json`; concurrent misses share one call. */
export class SummaryCache {
  private pending = new Map<string, Promise<ArticleSummary>>();
  constructor(private deps: { dir: string; model: ModelClient; clock: Clock; log: Logger; attempts?: number }) {}

  /** The summary of `post`: from the cache, else from the model (retried once) and then cached. */
  get(post: Post, mode: Mode): Promise<ArticleSummary> {
    const file = join(this.deps.dir, `${post.hash}.${mode}.json`);
    const running = this.pending.get(file);
    if (running) return running;
    const p = this.load(file, post, mode).finally(() => this.pending.delete(file));
    this.pending.set(file, p);
    return p;
  }

  private async load(file: string, post: Post, mode: Mode): Promise<ArticleSummary> {
    const hit = await readCached(file);
    if (hit) return { ...hit, title: post.title, mode, cached: true };
    const answer = await this.ask(post, mode);
    const summary: ArticleSummary = { title: post.title, ...answer, mode, model: this.deps.model.name, cached: false };
    const { cached: _, ...stored } = summary;
    await mkdir(this.deps.dir, { recursive: true })
      .then(() => writeFileAtomic(file, stableStringify({ ...stored, created_at: this.deps.clock.iso() })))
      .catch((err) => this.deps.log.warn(`summary cache not written: ${(err as Error).message}`));
    return summary;
  }

  // Up to `attempts` calls; a missing configuration or a busy model is not retried.
  private async ask(post: Post, mode: Mode) {
    let last: unknown;
    for (let i = 0; i < (this.deps.attempts ?? 2); i++) {
      try {
        return parseSummaryAnswer(await this.deps.model.complete(summaryMessages(post, mode)));
      } catch (err) {
        last = err;
        this.deps.log.warn(`summary of ${post.slug} (${mode}), attempt ${i + 1}: ${(err as Error).message}`);
        if (err instanceof ModelError && (err.kind === 'not_configured' || err.kind === 'busy')) break;
      }
    }
    throw last;
  }
}

// A cached summary, or null when absent or not of the expected shape (then it is recomputed).
async function readCached(file: string): Promise<Omit<ArticleSummary, 'title' | 'mode' | 'cached'> | null> {
  let json: Record<string, unknown>;
  try { json = JSON.parse(await readFile(file, 'utf8')); } catch { return null; }
  const candidate: Record<string, unknown> = { ...json, cached: true };
  delete candidate.created_at;
  return Value.Check(ArticleSummary, candidate) ? { format: candidate.format as 'bullets', items: candidate.items as string[], whyItMatters: candidate.whyItMatters as string, model: candidate.model as string } : null;
}
