// A small server-sent events reader over fetch for tests: frames as they arrive, comments included.

/** One SSE frame (a comment frame has only `comment`). */
export interface Frame {
  id: string | null;
  event: string;
  data: string;
  comment: string | null;
}

export interface SseClient {
  status: number;
  frames: Frame[];
  /** Resolves with the first frame (already received or to come) that passes `pred`. */
  next(pred: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  close(): void;
}

function parse(block: string): Frame {
  const f: Frame = { id: null, event: 'message', data: '', comment: null };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) { f.comment = line.slice(1).trim(); continue; }
    const at = line.indexOf(':');
    const [k, v] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1).replace(/^ /, '')];
    if (k === 'id') f.id = v;
    else if (k === 'event') f.event = v;
    else if (k === 'data') data.push(v);
  }
  f.data = data.join('\n');
  return f;
}

/** Open `url` as an event stream with the given headers. */
export async function openEvents(url: string, headers: Record<string, string>): Promise<SseClient> {
  const ctl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctl.signal });
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  if (res.ok && res.body) {
    void (async () => {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf = (buf + value).replace(/\r\n?/g, '\n');
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            frames.push(parse(buf.slice(0, i)));
            buf = buf.slice(i + 2);
            for (const w of waiters) w();
          }
        }
      } catch { /* aborted */ }
    })();
  }
  return {
    status: res.status,
    frames,
    next(pred, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const f = frames.find(pred);
          if (!f) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(f);
          return true;
        };
        const timer = setTimeout(() => { waiters.delete(check); reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames.slice(-5))}`)); }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close: () => ctl.abort(),
  };
}
