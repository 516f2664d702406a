import type { IncomingMessage, ServerResponse } from 'node:http';

export interface SseOptions {
  /** Interval of `: ping` comments that keep proxies from closing an idle stream (default 15 s). */
  pingMs?: number;
  /** Reconnect delay suggested to the client (`retry:`), in ms; omitted when undefined. */
  retryMs?: number;
}

/** An open server-sent-events response. */
export interface SseStream {
  /** Write one event; `data` that is not a string is sent as JSON. No-op once closed. */
  send(id: string | number | null, event: string | null, data: unknown): void;
  /** Write a comment line (`: text`). */
  comment(text: string): void;
  /** True once the client went away or close() was called. */
  readonly closed: boolean;
  /** Run `fn` once when the stream closes (at once if it already has). */
  onClose(fn: () => void): void;
  /** End the response from the server side. */
  close(): void;
}

// A field value must not contain a line break; each line of the data becomes its own `data:` line.
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

/** Start an SSE response; every timer and listener it creates is released when the client goes away. */
export function openSse(req: IncomingMessage, res: ServerResponse, opts: SseOptions = {}): SseStream {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive', 'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  req.socket.setNoDelay(true);
  if (opts.retryMs !== undefined) res.write(`retry: ${opts.retryMs}\n\n`);
  let closed = false;
  const closers: (() => void)[] = [];
  const ping = setInterval(() => res.write(': ping\n\n'), opts.pingMs ?? 15_000);
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    res.off('close', finish);
    for (const fn of closers.splice(0)) fn();
  };
  // The response's 'close' fires on client disconnect and after end(); the request's fires when its body is read.
  res.on('close', finish);
  return {
    get closed() { return closed; },
    send(id, event, data) {
      if (closed) return;
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      let frame = id === null ? '' : `id: ${oneLine(String(id))}\n`;
      if (event) frame += `event: ${oneLine(event)}\n`;
      for (const line of text.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
      res.write(frame + '\n');
    },
    comment(text) { if (!closed) res.write(`: ${oneLine(text)}\n\n`); },
    onClose(fn) { if (closed) fn(); else closers.push(fn); },
    close() { if (!closed) { res.end(); finish(); } },
  };
}
