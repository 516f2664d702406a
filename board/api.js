// Talking to the server: the signed-in cookie (svc_session) travels by itself; a pasted token is kept
// in this browser and sent as a bearer header. Streams are read with fetch (EventSource cannot send headers).

const KEY = 'svc.board.token';

/** The pasted token, or '' (the SSO cookie, if any, is used then). */
export function savedToken() {
  try { return localStorage.getItem(KEY) || ''; } catch { return ''; }
}

/** Keep (or with '' forget) the pasted token. */
export function saveToken(value) {
  try { if (value) localStorage.setItem(KEY, value); else localStorage.removeItem(KEY); } catch { /* storage off */ }
}

function headers(extra = {}) {
  const t = savedToken();
  return t ? { ...extra, authorization: `Bearer ${t}` } : extra;
}

/** One JSON call; resolves with { status, body } and never throws for an HTTP error. */
export async function api(method, path, body) {
  const res = await fetch(path, {
    method, credentials: 'same-origin',
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One SSE block (lines up to a blank line) → { id, event, data } (data lines joined).
function parseBlock(block) {
  const out = { id: null, event: 'message', data: '' };
  const data = [];
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const at = line.indexOf(':');
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
    if (field === 'id') out.id = value;
    else if (field === 'event') out.event = value;
    else if (field === 'data') data.push(value);
  }
  out.data = data.join('\n');
  return out;
}

/**
 * Follow a server-sent event stream, reconnecting with Last-Event-ID after a drop.
 * Handlers: onEvent({ id, event, data }), onState('live' | 'retrying' | 'denied').
 */
export function follow(path, { lastEventId = null, onEvent, onState = () => {} }) {
  const ctl = new AbortController();
  let last = lastEventId;
  let stopped = false;
  (async () => {
    for (let delay = 500; !stopped; delay = Math.min(delay * 2, 10_000)) {
      try {
        const h = headers({ accept: 'text/event-stream' });
        if (last !== null && last !== undefined) h['last-event-id'] = String(last);
        const res = await fetch(path, { headers: h, credentials: 'same-origin', signal: ctl.signal, cache: 'no-store' });
        if (res.status === 401 || res.status === 403 || res.status === 404) { onState('denied', res.status); return; }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        onState('live');
        delay = 500;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf = (buf + value).replace(/\r\n?/g, '\n');
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            const ev = parseBlock(buf.slice(0, i));
            buf = buf.slice(i + 2);
            if (ev.id !== null) last = ev.id;
            if (ev.data || ev.event !== 'message') onEvent(ev);
          }
        }
      } catch {
        if (stopped) return;
      }
      if (stopped) return;
      onState('retrying');
      await sleep(delay);
    }
  })();
  return { close() { stopped = true; ctl.abort(); } };
}
