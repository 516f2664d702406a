import type { ServerResponse } from 'node:http';
import { Type } from '../lib/typebox.ts';
import { RAW } from '../lib/route.ts';
import { askMessages, citationsFor, citedNumbers, NO_MATCH, summariseMessages } from './ask.ts';
import { defineSiteRoute as route, type SiteDeps, type SiteRoute, type SseLike } from './deps.ts';
import { notConfigured, rateLimited, siteError } from './errors.ts';
import { limitBy } from './routes.ts';
import { ModelError, type ModelStream } from './model.ts';
import { SLUG } from './content.ts';
import { ArticleSummary, MODES } from './summary.ts';

/** Body cap of /api/ask, as the original had it. */
export const ASK_BODY_LIMIT = 8 * 1024;
const Str = Type.String();
const Envelope = Type.Object({ ok: Type.Boolean(), error: Type.Object({ code: Str, message: Str }), detail: Str }, { additionalProperties: true });
const SummaryBody = Type.Object({ slug: Type.String({ pattern: SLUG.source, maxLength: 200 }), mode: Type.Union(MODES.map((m) => Type.Literal(m))) });
const AskBody = Type.Object({ query: Type.String({ minLength: 1, maxLength: 2000 }) });
const Hit = Type.Object({ title: Type.String({ minLength: 1, maxLength: 300 }), excerpt: Type.String({ maxLength: 2000 }), url: Type.Optional(Type.String({ maxLength: 2000 })) });
const SummariseBody = Type.Object({ query: Type.String({ minLength: 1, maxLength: 500 }), hits: Type.Array(Hit, { minItems: 1, maxItems: 3 }) });

/** The HTTP error of a failed model call: not configured or busy/slow → 503, a bad or unreachable upstream → 502. */
export function modelFailure(err: unknown): unknown {
  if (!(err instanceof ModelError)) return err;
  if (err.kind === 'not_configured') return notConfigured('The upstream model');
  if (err.kind === 'upstream' || err.kind === 'unreachable') return siteError(502, 'UPSTREAM_FAILED', err.message);
  return siteError(503, 'TEMPORARILY_UNAVAILABLE', err.message, { headers: { 'retry-after': '1' } });
}

// Aborts the upstream call when the visitor goes away before the answer is complete.
function abortOnClose(res: ServerResponse): AbortController {
  const ctrl = new AbortController();
  res.once('close', () => ctrl.abort());
  return ctrl;
}

// Token frames, then the citation frame; a failure mid-stream becomes one `error` frame.
async function relay(sse: SseLike, stream: ModelStream, deps: SiteDeps, hits: Parameters<typeof citationsFor>[1]): Promise<void> {
  let answer = '';
  try {
    for await (const text of stream.tokens) {
      if (sse.closed) break;
      answer += text;
      sse.send(null, 'token', { text });
    }
    sse.send(null, 'citations', { citations: citationsFor(answer, hits) });
  } catch (err) {
    deps.log.warn(`ask stream failed: ${(err as Error).message}`);
    const code = err instanceof ModelError && err.kind === 'timeout' ? 'TEMPORARILY_UNAVAILABLE' : 'UPSTREAM_FAILED';
    sse.send(null, 'error', { code, message: err instanceof ModelError ? err.message : 'the answer was interrupted' });
  } finally {
    stream.close();
    sse.close();
  }
}

/** POST /api/blog/summary, /api/ask (SSE) and /api/ask/summarise. */
export function assistantRoutes(deps: SiteDeps): SiteRoute[] {
  return [
    route({
      method: 'POST', path: '/api/blog/summary', operationId: 'site_blog_summary', summary: 'Summary of a published article (cached by a hash of its text)', tags: ['site'], access: 'public',
      body: SummaryBody,
      responses: {
        200: { description: 'Summary', schema: Type.Object({ ok: Type.Boolean(), data: ArticleSummary }) }, 400: { description: 'INVALID_PARAMS', schema: Envelope },
        404: { description: 'INVALID_ARTICLE: unknown or draft slug', schema: Envelope }, 503: { description: 'NOT_CONFIGURED or TEMPORARILY_UNAVAILABLE', schema: Envelope },
      },
      handler: async ({ body }) => {
        const post = deps.content.posts.get(body.slug);
        if (!post || post.draft) throw siteError(404, 'INVALID_ARTICLE', `No published article '${body.slug}'`);
        try {
          return { ok: true, data: await deps.summaries.get(post, body.mode) };
        } catch (err) {
          if (err instanceof ModelError && err.kind === 'not_configured') throw notConfigured('The upstream model');
          if (err instanceof ModelError) throw siteError(503, 'TEMPORARILY_UNAVAILABLE', `The summary could not be produced: ${err.message}`, { headers: { 'retry-after': '5' } });
          throw err;
        }
      },
    }),
    route({
      method: 'POST', path: '/api/ask', operationId: 'site_ask', summary: 'Answer a question from the articles (SSE: token frames, then citations)', tags: ['site'], access: 'public',
      body: AskBody, bodyLimit: ASK_BODY_LIMIT, guard: limitBy(deps.limiters.assistant, rateLimited),
      responses: {
        200: { description: 'text/event-stream: `token` frames {text}, then one `citations` frame; or one `error` frame', contentType: 'text/event-stream', schema: Str },
        400: { description: 'INVALID_PARAMS', schema: Envelope }, 413: { description: 'Body over 8 KB', schema: Envelope }, 429: { description: 'RATE_LIMITED', schema: Envelope },
        502: { description: 'UPSTREAM_FAILED', schema: Envelope }, 503: { description: 'NOT_CONFIGURED or TEMPORARILY_UNAVAILABLE', schema: Envelope },
      },
      handler: async ({ req, res, body }) => {
        const query = body.query.trim();
        if (!query) throw siteError(400, 'INVALID_PARAMS', 'query is empty');
        if (!deps.model.configured) throw notConfigured('The upstream model');
        if (deps.content.index.size === 0) {
          const sse = deps.openSse(req, res);
          sse.send(null, 'error', { code: 'RETRIEVAL_UNAVAILABLE', message: 'no articles are indexed' });
          sse.close();
          return RAW;
        }
        const hits = deps.content.index.search(query);
        if (hits.length === 0) {
          const sse = deps.openSse(req, res);
          sse.send(null, 'token', { text: NO_MATCH });
          sse.send(null, 'citations', { citations: [] });
          sse.close();
          return RAW;
        }
        const ctrl = abortOnClose(res);
        let stream: ModelStream;
        try {
          stream = await deps.model.stream(askMessages(query, hits), { signal: ctrl.signal });
        } catch (err) {
          throw modelFailure(err);
        }
        await relay(deps.openSse(req, res), stream, deps, hits);
        return RAW;
      },
    }),
    route({
      method: 'POST', path: '/api/ask/summarise', operationId: 'site_ask_summarise', summary: 'Summarise one to three search hits with numbered citations', tags: ['site'], access: 'public',
      body: SummariseBody, bodyLimit: 16 * 1024,
      responses: {
        200: { description: 'Summary', schema: Type.Object({ ok: Type.Boolean(), data: Type.Object({ summary: Str, model: Str, citations: Type.Array(Type.Integer()) }) }) },
        400: { description: 'INVALID_PARAMS', schema: Envelope }, 502: { description: 'UPSTREAM_FAILED', schema: Envelope },
        503: { description: 'NOT_CONFIGURED or TEMPORARILY_UNAVAILABLE', schema: Envelope },
      },
      handler: async ({ res, body }) => {
        const ctrl = abortOnClose(res);
        let summary: string;
        try {
          summary = (await deps.model.complete(summariseMessages(body.query, body.hits), { signal: ctrl.signal, maxTokens: 400 })).trim();
        } catch (err) {
          throw modelFailure(err);
        }
        return { ok: true, data: { summary, model: deps.model.name, citations: citedNumbers(summary, body.hits.length) } };
      },
    }),
  ];
}
