// The worker's HTTP calls to the central server: one JSON request with a deadline; a network failure is an answer too.

/** A server's answer; status 0 = no answer (refused, reset, timed out), with the reason in `error`. */
export interface Answer<T = any> {
  status: number;
  body: T;
  error?: string;
}

/** How the worker reaches the server. */
export interface ServerClient {
  readonly server: string;
  call<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown; timeoutMs?: number; signal?: AbortSignal }): Promise<Answer<T>>;
}

/** A client of `server`; `token()` is the bearer unless a call names its own. */
export function serverClient(server: string, token: () => string, fetchFn: typeof fetch = fetch): ServerClient {
  return {
    server,
    async call(method, path, o = {}) {
      const timeout = AbortSignal.timeout(o.timeoutMs ?? 30_000);
      const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
      const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? token()}` };
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      try {
        const res = await fetchFn(server + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), signal });
        const text = await res.text();
        let body: unknown = text;
        try { body = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
        return { status: res.status, body: body as any };
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        return { status: 0, body: null as any, error: e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? e.message) };
      }
    },
  };
}

/** The `detail` of an error answer, or its network reason, for logs. */
export function why(a: Answer): string {
  if (a.status === 0) return a.error ?? 'no answer';
  const d = a.body && typeof a.body === 'object' && 'detail' in a.body ? (a.body as { detail: unknown }).detail : a.body;
  return `${a.status} ${typeof d === 'string' ? d : JSON.stringify(d)}`.slice(0, 300);
}
