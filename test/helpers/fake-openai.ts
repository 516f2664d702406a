// A local OpenAI-compatible chat completions server for the website host's tests: it speaks the real
// wire protocol (JSON answers, SSE `data:` chunks ending with [DONE]) and can be slow, stall or fail.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the fake answers one request. */
export type Behaviour =
  | { text: string; chunkDelayMs?: number; stallAfter?: number; jsonEvenIfStream?: boolean }
  | { status: number; body?: string }
  | { hang: true }
  | { raw: string; contentType: string }
  | { streamError: string; after?: string };

export interface FakeOpenAI {
  /** Base URL (…/v1) to give as SERVICE_SITE_MODEL_URL. */
  url: string;
  /** Requests received: parsed JSON body and headers. */
  requests: { body: any; headers: IncomingMessage['headers'] }[];
  /** Answer the next requests with these behaviours, in order; then `fallback`. */
  queue: Behaviour[];
  fallback: Behaviour;
  /** Connections closed by the client while the fake was still answering (an aborted upstream call). */
  aborted: number;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;

async function answer(b: Behaviour, stream: boolean, res: ServerResponse, fake: FakeOpenAI): Promise<void> {
  if ('hang' in b) return; // never answers; the client's timeout must end it
  if ('status' in b) { res.writeHead(b.status, { 'content-type': 'application/json' }).end(b.body ?? '{"error":{"message":"boom"}}'); return; }
  if ('raw' in b) { res.writeHead(200, { 'content-type': b.contentType }).end(b.raw); return; }
  if ('streamError' in b) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (b.after) res.write(chunk(b.after));
    res.end(`data: ${JSON.stringify({ error: { message: b.streamError } })}\n\n`);
    return;
  }
  if (!stream || b.jsonEvenIfStream) {
    res.writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: b.text }, finish_reason: 'stop' }] }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] })}\n\n`);
  const words = b.text.match(/\S+\s*/g) ?? [];
  for (let i = 0; i < words.length; i++) {
    if (b.stallAfter !== undefined && i >= b.stallAfter) return; // stays open, silent
    if (res.destroyed) { fake.aborted++; return; }
    res.write(chunk(words[i]!));
    if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
  }
  res.end('data: [DONE]\n\n');
}

/** Start the fake on a loopback port. */
export async function startFakeOpenAI(fallback: Behaviour = { text: 'Hello from the fake model.' }): Promise<FakeOpenAI> {
  const sockets = new Set<Socket>();
  const fake: FakeOpenAI = { url: '', requests: [], queue: [], fallback, aborted: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d)).on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) { res.writeHead(404).end(); return; }
      let body: any;
      try { body = JSON.parse(text); } catch { res.writeHead(400).end(); return; }
      fake.requests.push({ body, headers: req.headers });
      res.once('close', () => { if (!res.writableEnded) fake.aborted++; });
      void answer(fake.queue.shift() ?? fake.fallback, body.stream === true, res, fake);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.once('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); });
  return fake;
}
