// `svc mcp`: MCP over stdio for agent CLIs, relayed message by message to /mcp of the running server, so
// there is one implementation of the tools and the token is checked by the server as for any request.
// A session the server no longer knows (it restarted while the agent ran) is opened again transparently.
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isInitializeRequest, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

export interface BridgeOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8052. */
  url: string;
  token?: string;
  tenant?: string;
  stdin: Readable;
  stdout: Writable;
  /** One line for people (stderr). */
  log: (line: string) => void;
}

const REOPEN_ID = 'svc-mcp-reopen';

/** Relay stdio ⇄ /mcp until stdin ends; resolves then (the session is ended on the server). */
export async function bridgeStdio(o: BridgeOptions): Promise<void> {
  const relay = new Relay(o);
  await relay.local.start();
  await new Promise<void>((resolve) => { o.stdin.once('end', resolve); o.stdin.once('close', resolve); });
  await relay.close();
}

// One relay: the client's stdio on one side, the current HTTP session on the other.
class Relay {
  readonly local: StdioServerTransport;
  private remote: StreamableHTTPClientTransport;
  private readonly endpoint: URL;
  private readonly headers: Record<string, string>;
  /** The client's initialize, replayed when the server has lost the session. */
  private init: JSONRPCRequest | undefined;
  private reopening: Promise<void> | undefined;

  constructor(private readonly o: BridgeOptions) {
    this.endpoint = new URL(`${o.url.replace(/\/+$/, '')}/mcp`);
    this.headers = { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(o.tenant ? { 'x-tenant-id': o.tenant } : {}) };
    this.local = new StdioServerTransport(o.stdin, o.stdout);
    this.local.onmessage = (m) => { void this.forward(m); };
    this.local.onerror = (err) => o.log(`svc mcp: bad input on stdin: ${err.message}`);
    this.remote = this.connect();
  }

  private connect(): StreamableHTTPClientTransport {
    const t = new StreamableHTTPClientTransport(this.endpoint, { requestInit: { headers: this.headers } });
    t.onmessage = (m) => {
      // The answer to initialize fixes the protocol version every later request names (MCP-Protocol-Version).
      if (isJSONRPCResultResponse(m) && typeof m.result.protocolVersion === 'string') t.setProtocolVersion(m.result.protocolVersion);
      if (isJSONRPCResultResponse(m) && m.id === REOPEN_ID) return;
      void this.local.send(m);
    };
    t.onerror = (err) => this.o.log(`svc mcp: ${describe(err, this.o.url).message}`);
    void t.start();
    return t;
  }

  private async forward(m: JSONRPCMessage, retried = false): Promise<void> {
    if (isInitializeRequest(m)) this.init = m as JSONRPCRequest;
    const via = this.remote;
    try {
      await this.reopening;
      await via.send(m);
    } catch (err) {
      if (!retried && this.init && m !== this.init && lost(err, via)) {
        await this.reopen(via).then(() => this.forward(m, true), (e: unknown) => this.answerError(m, e));
        return;
      }
      await this.answerError(m, err);
    }
  }

  // A new session with the client's own initialize (its answer kept from the client), then `initialized`.
  private reopen(stale: StreamableHTTPClientTransport): Promise<void> {
    if (this.remote !== stale) return this.reopening ?? Promise.resolve();
    const fresh = (this.remote = this.connect());
    void stale.close();
    const attempt = (async () => {
      await fresh.send({ ...this.init!, id: REOPEN_ID });
      await fresh.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      this.o.log('svc mcp: the server had lost the session (restarted?): opened a new one');
    })();
    // Later messages wait for it, but never fail because of it: a failed reopen is tried again by the next one.
    const settled: Promise<void> = attempt.then(() => undefined, () => undefined).then(() => { if (this.reopening === settled) this.reopening = undefined; });
    this.reopening = settled;
    return attempt;
  }

  // A request the server could not take gets a JSON-RPC error naming why; other messages are logged.
  private async answerError(m: JSONRPCMessage, err: unknown): Promise<void> {
    const why = describe(err, this.o.url);
    if (isJSONRPCRequest(m)) await this.local.send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: why.message, data: { status: why.status } } });
    else this.o.log(`svc mcp: ${why.message}`);
  }

  /** End the session on the server (at most 2 s) and both transports. */
  async close(): Promise<void> {
    await Promise.race([this.remote.terminateSession().catch(() => undefined), new Promise((r) => setTimeout(r, 2000).unref())]);
    await this.remote.close();
    await this.local.close();
  }
}

// The server does not know the session (404), or the reopen before did not get one (400 without a session id).
const lost = (err: unknown, via: StreamableHTTPClientTransport): boolean =>
  err instanceof StreamableHTTPError && (err.code === 404 || (err.code === 400 && via.sessionId === undefined));

/** Why a relay failed, in words: the server's detail and status, or that it cannot be reached. */
export function describe(err: unknown, url: string): { status: number; message: string } {
  if (err instanceof StreamableHTTPError) {
    const text = err.message.replace(/^Streamable HTTP error: (Error POSTing to endpoint: )?/, '');
    let detail = text;
    try {
      const body = JSON.parse(text) as { detail?: unknown; error?: { message?: unknown } };
      const d = body.detail ?? body.error?.message;
      if (d !== undefined) detail = typeof d === 'string' ? d : JSON.stringify(d);
    } catch { /* not JSON: the text as is */ }
    const status = err.code ?? -1;
    return { status, message: `svc at ${url} answered ${status}: ${detail}` };
  }
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return { status: 0, message: `cannot reach svc at ${url}: ${cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err)} (is 'svc up' running?)` };
}
