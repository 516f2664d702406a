// A minimal JSON client over node:http with one shared keep-alive Agent, so the client is cheap.
// (undici is not installed here, only undici-types; node's global fetch hides its Agent on Node 20.)
import { Agent, request } from 'node:http';

export interface JsonClient {
  /** One request; resolves with the status and the parsed body (undefined when empty). */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): void;
}

/** A client for `baseUrl` with `connections` keep-alive sockets and a bearer token. */
export function jsonClient(baseUrl: string, token: string, connections: number): JsonClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  const auth = `Bearer ${token}`;
  const call: JsonClient['call'] = (method, path, body) =>
    new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { authorization: auth, accept: 'application/json' };
      if (data) { headers['content-type'] = 'application/json'; headers['content-length'] = data.length; }
      const req = request({ host: url.hostname, port: url.port, method, path, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(data);
    });
  return { call, close: () => agent.destroy() };
}
