// The worker as a cluster node: the same version as the server, registration (kept across restarts in
// `.sdd/runtime/worker/node.json`, so a restarted worker is the same node and still holds its tasks),
// heartbeats, and what each answer means.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../lib/log.ts';
import type { Answer, ServerClient } from './client.ts';
import { why } from './client.ts';
import type { WorkerOptions } from './options.ts';

/** Who this worker is to the server. */
export interface NodeIdentity {
  id: string;
  token: string;
}

/** What a heartbeat's answer asks of the worker (pure; INTERFACE.md Errors rule 4). */
export function afterHeartbeat(a: Pick<Answer, 'status'>): 'ok' | 'register' | 'retry' | 'refused' {
  if (a.status >= 200 && a.status < 300) return 'ok';
  // Evicted (404), or a token the server no longer takes (401: revoked, expired, a new cluster secret).
  if (a.status === 404 || a.status === 401) return 'register';
  if (a.status === 0 || a.status >= 500 || a.status === 429) return 'retry';
  return 'refused';
}

/** The agents a heartbeat's answer asks this node to kill (pure; `kill_sessions` of the answer, well-formed entries only). */
export function killsOf(body: unknown): { session_id: string; requested_by: string }[] {
  const list = body && typeof body === 'object' ? (body as { kill_sessions?: unknown }).kill_sessions : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter((k): k is { session_id: string; requested_by: string } => !!k && typeof k.session_id === 'string' && typeof k.requested_by === 'string');
}

/**
 * The state commit a heartbeat's answer names (pure): a string, null when the board has none yet, undefined
 * when the answer does not say (then the worker mirrors the board every poll, as before servers said it).
 */
export function stateHeadOf(body: unknown): string | null | undefined {
  const h = body && typeof body === 'object' ? (body as { state_head?: unknown }).state_head : undefined;
  return typeof h === 'string' || h === null ? h : undefined;
}

/** Why the worker must not run against this server, or null (pure; INTERFACE.md Versioning 2). */
export function versionProblem(server: unknown, mine: string): string | null {
  const v = server && typeof server === 'object' ? (server as { version?: unknown }).version : undefined;
  if (typeof v !== 'string') return 'the server did not say its version (GET / has no version): is it an svc server?';
  return v === mine ? null : `the server runs svc ${v} and this worker svc ${mine}: workers must run the same version as the server`;
}

/** Wait until the server answers `GET /`; the reason it runs another version, or null (INTERFACE.md Versioning 2). */
export async function serverVersion(client: ServerClient, mine: string, stop: AbortSignal, sleep: (ms: number) => Promise<void>, log: Logger): Promise<string | null> {
  for (let warned = false; !stop.aborted;) {
    const a = await client.call('GET', '/', { timeoutMs: 10_000 });
    if (a.status === 200) return versionProblem(a.body, mine);
    if (!warned) log.warn(`cannot reach the server at ${client.server} (${why(a)}); trying again every 5 s`);
    warned = true;
    await sleep(5_000);
  }
  return null;
}

/** The registration body: name, a url that makes re-registration by name match, capacity, labels. */
export function registration(o: WorkerOptions, active: number): Record<string, unknown> {
  return {
    name: o.name, url: `worker:${o.name}`, labels: o.labels, cell_ids: [],
    capacity: { max_agents: o.slots, available_slots: Math.max(0, o.slots - active), active_agents: active, gpu_available: false, supported_models: o.model ? [o.model] : [] },
  };
}

/** Register: with the node's own token first (the same id even after an eviction), else with the registration token. */
export async function register(client: ServerClient, o: WorkerOptions, known: NodeIdentity | null, active: number): Promise<{ node: NodeIdentity } | { fatal: string } | { retry: string }> {
  const body = registration(o, active);
  let a = known ? await client.call('POST', '/cluster/nodes', { token: known.token, body, timeoutMs: 10_000 }) : null;
  if (!a || a.status === 401 || a.status === 403) a = await client.call('POST', '/cluster/nodes', { token: o.token, body, timeoutMs: 10_000 });
  if (a.status === 201 && typeof a.body?.id === 'string' && typeof a.body?.auth_token === 'string') return { node: { id: a.body.id, token: a.body.auth_token } };
  if (a.status === 401 || a.status === 403) return { fatal: `registration refused (${why(a)}): --token must be the cluster secret or a token with node:register` };
  return { retry: why(a) };
}

/** The node identity file (0600: the token acts as this node). */
export class NodeFile {
  constructor(readonly path: string) {}

  async read(): Promise<NodeIdentity | null> {
    try {
      const v = JSON.parse(await readFile(this.path, 'utf8')) as Partial<NodeIdentity>;
      return typeof v.id === 'string' && typeof v.token === 'string' ? { id: v.id, token: v.token } : null;
    } catch {
      return null;
    }
  }

  async write(n: NodeIdentity): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await writeFile(`${this.path}.tmp`, JSON.stringify(n) + '\n', { mode: 0o600, flush: true });
    await rename(`${this.path}.tmp`, this.path);
  }
}
