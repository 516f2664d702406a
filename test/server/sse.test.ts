import { request, type IncomingMessage } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defineRoute, RAW, type Route } from '../../src/lib/route.ts';
import { openSse, type SseStream } from '../../src/server/sse.ts';
import { ADMIN, startServer, type Harness } from './harness.ts';

let stream: SseStream | undefined;
let closeListenersBefore = -1;
let resRef: import('node:http').ServerResponse | undefined;
let closedCalls = 0;

const routes: Route[] = [defineRoute({
  method: 'GET', path: '/stream', operationId: 'stream', summary: 'SSE', tags: ['t'], access: 'read',
  responses: { 200: { description: 'events', contentType: 'text/event-stream' } },
  handler: ({ req, res }) => {
    closeListenersBefore = res.listenerCount('close');
    resRef = res;
    stream = openSse(req, res, { pingMs: 20, retryMs: 1000 });
    stream.onClose(() => { closedCalls++; });
    stream.send(7, 'log', { line: 'hello' });
    stream.send(null, null, 'two\nlines');
    return RAW;
  },
})];

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

// Open the stream with node:http (no client-side timers), collect text until `until` matches.
function open(h: Harness, until: RegExp): Promise<{ res: IncomingMessage; text: string; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: h.port, path: '/stream', agent: false, headers: { authorization: `Bearer ${ADMIN}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (until.test(text)) resolve({ res, text, destroy: () => req.destroy() });
      });
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    req.end();
  });
}

const waitFor = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) { if (Date.now() > end) throw new Error('timed out'); await new Promise((r) => setTimeout(r, 5)); }
};

let h: Harness;
const T = suite('sse helper');
T.before(async () => { h = await startServer({ routes }); });
T.after(async () => { await h.close(); });

T('writes SSE headers, frames and pings', async () => {
  const { res, text, destroy } = await open(h, /: ping\n\n/);
  assert.is(res.headers['content-type'], 'text/event-stream; charset=utf-8');
  assert.is(res.headers['cache-control'], 'no-cache, no-transform');
  assert.is(res.headers['x-accel-buffering'], 'no');
  assert.ok(text.startsWith('retry: 1000\n\n'));
  assert.match(text, /id: 7\nevent: log\ndata: \{"line":"hello"\}\n\n/);
  assert.match(text, /data: two\ndata: lines\n\n/);
  destroy();
  await waitFor(() => stream?.closed === true);
});

T('client disconnect frees the ping timer and every listener, once', async () => {
  const before = timeouts();
  closedCalls = 0;
  const { destroy } = await open(h, /: ping/);
  assert.is(timeouts(), before + 1, 'the ping interval is the only timer while open');
  destroy();
  await waitFor(() => stream?.closed === true);
  assert.is(closedCalls, 1);
  assert.is(timeouts(), before, 'no interval left after the client left');
  await waitFor(() => resRef!.listenerCount('close') <= closeListenersBefore);
  stream!.send(1, 'log', 'after close is a no-op');
  stream!.onClose(() => { closedCalls++; });
  assert.is(closedCalls, 2, 'onClose after close runs at once');
});

T('server-side close() ends the response and frees the timer', async () => {
  const before = timeouts();
  const got = open(h, /data: lines/);
  const { res } = await got;
  const ended = new Promise((r) => res.on('end', r));
  stream!.close();
  await ended;
  assert.ok(stream!.closed);
  assert.is(timeouts(), before);
});

T.run();
