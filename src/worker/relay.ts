// The worker's relay on 127.0.0.1: agents on a worker report here, with a token of their session, the
// same way they report to a server (SERVICE_SERVER_URL). Progress and reads of their own task go on to
// the server with the node token; complete and fail are kept by the worker, which pushes the branch
// and reports them itself (through the outbox), so no agent ever holds a server credential.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { ServerClient } from './client.ts';

/** What the relay asks of the worker. */
export interface RelayHost {
  client: ServerClient;
  /** The live session whose relay token this is, or undefined. */
  sessionByToken(token: string): { session_id: string; task_id: string } | undefined;
  /** The agent of `sid` reported its end: record it (durably) and return the task as the server would after it. */
  report(sid: string, op: 'complete' | 'fail', body: Record<string, unknown>): Promise<unknown>;
}

const MAX_BODY = 1 << 20;
const ROUTE = /^\/tasks\/([^/?]+)(?:\/(progress|complete|fail))?$/;

/** Start the relay; resolves with its URL (http://127.0.0.1:<port>). */
export async function startRelay(host: RelayHost, port = 0): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => void handle(host, req, res).catch((err: Error) => send(res, 502, { detail: `worker relay: ${err.message}` })));
  // The port of the last run when it is free: agents that outlived a worker restart still reach it.
  await listen(server, port).catch(() => listen(server, 0));
  const address = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${address}`, port: address,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The relay on the port its last run had (kept in `portFile`), so agents that outlived a worker restart still reach it. */
export async function startRelayKept(host: RelayHost, portFile: string): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const relay = await startRelay(host, await readFile(portFile, 'utf8').then((t) => Number(t.trim()) || 0, () => 0));
  await mkdir(dirname(portFile), { recursive: true, mode: 0o700 });
  await writeFile(portFile, `${relay.port}\n`, { mode: 0o600 });
  return relay;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
}

async function handle(host: RelayHost, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const session = bearer ? host.sessionByToken(bearer) : undefined;
  if (!session) return send(res, 401, { detail: 'Missing or invalid token' });
  const url = new URL(req.url ?? '/', 'http://relay');
  const m = ROUTE.exec(url.pathname);
  const taskId = m ? decodeURIComponent(m[1]!) : '';
  if (!m || (taskId !== session.task_id && !session.task_id.startsWith(taskId))) {
    return send(res, 403, { detail: `token is scoped to task '${session.task_id}': agents on a worker report progress and completion of their own task only` });
  }
  const verb = m[2];
  if (req.method === 'GET' && !verb) return forward(host, res, 'GET', `/tasks/${encodeURIComponent(session.task_id)}`);
  if (req.method !== 'POST' || !verb) return send(res, 405, { detail: 'not available to agents on a worker' });
  const body = await readJson(req);
  if (body === undefined) return send(res, 400, { detail: 'the body must be a JSON object of at most 1 MiB' });
  if (verb === 'progress') return forward(host, res, 'POST', `/tasks/${encodeURIComponent(session.task_id)}/progress`, body);
  if (verb === 'complete' && !(typeof body.result_summary === 'string' && body.result_summary.trim())) {
    return send(res, 422, { detail: 'completion missing summary: result_summary is empty' });
  }
  send(res, 200, await host.report(session.session_id, verb as 'complete' | 'fail', body));
}

async function forward(host: RelayHost, res: ServerResponse, method: string, path: string, body?: unknown): Promise<void> {
  const a = await host.client.call(method, path, { body });
  if (a.status === 0) return send(res, 503, { detail: `the server cannot be reached: ${a.error}` });
  send(res, a.status, a.body);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(c);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? null));
}

/** Constant-time token equality (the relay's tokens are random hex of one length). */
export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
