import { SseLines } from './sse-lines.ts';

/** Why a model call failed; the routes map each kind to a status (503 or 502). */
export type ModelFailure = 'not_configured' | 'busy' | 'timeout' | 'unreachable' | 'upstream' | 'aborted';

/** A failed call to the upstream model, as data. `message` is safe to show a visitor. */
export class ModelError extends Error {
  constructor(readonly kind: ModelFailure, message: string) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Where the OpenAI-compatible chat completions endpoint is and how long to wait for it. */
export interface ModelSettings {
  /** Base URL (…/v1) or the full …/chat/completions URL; unset = not configured. */
  url?: string;
  key?: string;
  model?: string;
  /** Whole call without streaming, and the wait for response headers when streaming (default 30 s). */
  timeoutMs?: number;
  /** Longest silence between two streamed chunks (default 15 s). */
  idleMs?: number;
  /** Calls in flight at once; more answer `busy` at once instead of queueing (default 16). */
  maxInFlight?: number;
  maxTokens?: number;
}

/** An open streamed answer: iterate `tokens`; `close()` (idempotent) frees the connection early. */
export interface ModelStream {
  tokens: AsyncIterable<string>;
  close(): void;
}

export interface ModelClient {
  readonly configured: boolean;
  /** Model name echoed in answers ('' when not configured). */
  readonly name: string;
  complete(messages: ChatMessage[], opts?: { signal?: AbortSignal; maxTokens?: number }): Promise<string>;
  /** Resolves once the endpoint answered with headers, so errors come before any SSE is opened. */
  stream(messages: ChatMessage[], opts?: { signal?: AbortSignal }): Promise<ModelStream>;
}

/** The chat completions URL of a base URL (a URL already ending in /chat/completions is kept). */
export function chatUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed}/chat/completions`;
}

// The text of a non-streamed answer, or why it is unusable.
export function answerText(json: unknown): string {
  const content = (json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new ModelError('upstream', 'model answer has no message content');
  return content;
}

// The text of one streamed chunk ('' for role-only or empty deltas); an error object fails the stream.
export function deltaText(data: string): string {
  let json: { error?: { message?: unknown }; choices?: { delta?: { content?: unknown } }[] };
  try { json = JSON.parse(data); } catch { throw new ModelError('upstream', 'model stream sent a chunk that is not JSON'); }
  if (json?.error) throw new ModelError('upstream', 'model stream reported an error');
  const content = json?.choices?.[0]?.delta?.content;
  return typeof content === 'string' ? content : '';
}

/** One call in flight: its controller, a timer that aborts as `timeout`, and its classification of failures. */
interface Call {
  ctrl: AbortController;
  /** (Re)start the timer: the call is aborted as `timeout` after `ms` without another arm. */
  arm(ms: number): void;
  /** Free the slot, stop the timer, abort what is left (idempotent). */
  release(): void;
  failure(err: unknown): ModelError;
}

// A call slot (or `busy`), a controller joined to the caller's signal, and its first timer.
function startCall(slots: { used: number; max: number }, timeoutMs: number, signal?: AbortSignal): Call {
  if (slots.used >= slots.max) throw new ModelError('busy', 'the model is busy; retry shortly');
  slots.used++;
  const ctrl = new AbortController();
  let timedOut = false, released = false, timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => { clearTimeout(timer); timer = setTimeout(() => { timedOut = true; ctrl.abort(); }, ms); };
  const onCaller = () => ctrl.abort();
  signal?.addEventListener('abort', onCaller, { once: true });
  arm(timeoutMs);
  return {
    ctrl, arm,
    release() {
      if (released) return;
      released = true;
      slots.used--;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCaller);
      ctrl.abort();
    },
    failure(err) {
      if (err instanceof ModelError) return err;
      if (timedOut) return new ModelError('timeout', 'the model did not answer in time');
      if (signal?.aborted) return new ModelError('aborted', 'the client went away');
      return new ModelError('unreachable', 'the model endpoint could not be reached');
    },
  };
}

/** A client for any OpenAI-compatible chat completions endpoint; every call ends by its timeouts. */
export function createModelClient(s: ModelSettings): ModelClient {
  const configured = Boolean(s.url && s.model);
  const endpoint = s.url ? chatUrl(s.url) : '';
  const timeoutMs = s.timeoutMs ?? 30_000, idleMs = s.idleMs ?? 15_000, maxInFlight = s.maxInFlight ?? 16;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (s.key) headers.authorization = `Bearer ${s.key}`;
  const slots = { used: 0, max: maxInFlight };
  const begin = (signal?: AbortSignal) => {
    if (!configured) throw new ModelError('not_configured', 'the upstream model is not configured');
    return startCall(slots, timeoutMs, signal);
  };

  const post = async (body: unknown, ctrl: AbortController): Promise<Response> => {
    const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal: ctrl.signal });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new ModelError('upstream', `the model endpoint answered ${res.status}`);
    }
    return res;
  };
  const request = (messages: ChatMessage[], stream: boolean, maxTokens?: number) =>
    ({ model: s.model, messages, stream, temperature: 0.2, max_tokens: maxTokens ?? s.maxTokens ?? 800 });

  return {
    configured,
    name: configured ? s.model! : '',
    async complete(messages, opts = {}) {
      const call = begin(opts.signal);
      try {
        const res = await post(request(messages, false, opts.maxTokens), call.ctrl);
        let json: unknown;
        try { json = JSON.parse(await res.text()); } catch (e) { if (call.ctrl.signal.aborted) throw e; throw new ModelError('upstream', 'model answer is not JSON'); }
        return answerText(json);
      } catch (err) {
        throw call.failure(err);
      } finally {
        call.release();
      }
    },
    async stream(messages, opts = {}) {
      const call = begin(opts.signal);
      let res: Response;
      try {
        res = await post(request(messages, true), call.ctrl);
      } catch (err) {
        call.release();
        throw call.failure(err);
      }
      call.arm(idleMs);
      return { tokens: readTokens(res, call, idleMs), close: call.release };
    },
  };
}

// The streamed deltas; a JSON answer (an endpoint that does not stream) is one token.
async function* readTokens(res: Response, call: Call, idleMs: number): AsyncGenerator<string> {
  try {
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      yield answerText(JSON.parse(await res.text()));
      return;
    }
    const lines = new SseLines();
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      call.arm(idleMs);
      for (const data of lines.push(decoder.decode(chunk, { stream: true }))) {
        if (data.trim() === '[DONE]') return;
        const text = deltaText(data);
        if (text) yield text;
      }
    }
    for (const data of lines.end()) if (data.trim() !== '[DONE]') yield deltaText(data);
  } catch (err) {
    throw call.failure(err instanceof SyntaxError ? new ModelError('upstream', 'model answer is not JSON') : err);
  } finally {
    call.release();
  }
}
