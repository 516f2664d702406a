// Shared setup for the HTTP API tests: one real `svc up` per test file over a temp repository.
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

export type Res = Awaited<ReturnType<RunningServer['api']>>;

/** A running server over a fresh repository, with small helpers that assert as they go. */
export interface Api {
  repo: TempRepo;
  s: RunningServer;
  /** POST /tasks; asserts 201 and returns the task. */
  create(body?: Record<string, unknown>, headers?: Record<string, string>): Promise<any>;
  /** Create and claim (POST /tasks/{id}/claim); returns the claimed task. */
  claimed(body?: Record<string, unknown>, session?: string): Promise<any>;
  /** POST /tasks/{id}/<verb> with a body. */
  verb(id: string, verb: string, body?: unknown): Promise<Res>;
  /** GET /tasks/{id}; asserts 200. */
  get(id: string): Promise<any>;
  /** Stop the server (SIGTERM) and start a new one over the same repository. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;
/** A title no other test in the file uses (batch creation deduplicates titles). */
export const title = (prefix = 'task') => `${prefix} ${++seq}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The parsed JSON of `path` once `ready` accepts it. The server acknowledges a write when its journal
 * line is on disk and writes the file itself right behind (milliseconds): a file read races with that.
 */
export async function fileWhen<T>(path: string, ready: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let v: T | undefined;
    try { v = JSON.parse(readFileSync(path, 'utf8')) as T; } catch { v = undefined; }
    if (v !== undefined && ready(v)) return v;
    if (Date.now() > until) throw new Error(`${path} did not reach the expected content in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await sleep(5);
  }
}

/** Start `svc up --no-orchestrator` over a new temp repository. */
export async function boot(opts: { env?: Record<string, string>; before?: (repo: TempRepo) => void } = {}): Promise<Api> {
  const repo = makeRepo('svc-api-');
  opts.before?.(repo);
  const start = () => startServer(repo.dir, { args: ['--no-orchestrator'], env: opts.env ?? {} });
  let first: RunningServer;
  try {
    first = await start();
  } catch (err) {
    repo.cleanup();
    throw err;
  }
  const api: Api = {
    repo, s: first,
    async create(body = {}, headers) {
      const r = await api.s.api('POST', '/tasks', { title: title(), ...body }, headers);
      assert.is(r.status, 201, `create: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async claimed(body = {}, session = 'sess-1') {
      const t = await api.create(body);
      const r = await api.s.api('POST', `/tasks/${t.id}/claim?claimed_by_session=${session}`);
      assert.is(r.status, 200, `claim: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    verb: (id, verb, body = {}) => api.s.api('POST', `/tasks/${id}/${verb}`, body),
    async get(id) {
      const r = await api.s.api('GET', `/tasks/${id}`);
      assert.is(r.status, 200, `get ${id}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async restart() {
      const code = await api.s.stop();
      assert.is(code, 0, `svc up exited ${code}:\n${api.s.output()}`);
      api.s = await start();
    },
    async close() {
      await api.s.stop().catch(() => undefined);
      repo.cleanup();
    },
  };
  return api;
}

/** Assert a 422 in the validation shape `{"detail":[{loc,msg,type}]}`; returns the issues. */
export function assertValidation(r: Res, where?: string): { loc: (string | number)[]; msg: string; type: string }[] {
  assert.is(r.status, 422, `expected 422, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.ok(Array.isArray(r.body?.detail) && r.body.detail.length > 0, `422 detail is a list: ${JSON.stringify(r.body)}`);
  for (const issue of r.body.detail) {
    assert.ok(Array.isArray(issue.loc), 'loc is a list');
    assert.type(issue.msg, 'string');
    assert.type(issue.type, 'string');
    if (where) assert.is(issue.loc[0], where);
  }
  return r.body.detail;
}

/** Assert an error status with a string `detail`; returns the detail. */
export function assertError(r: Res, status: number, match?: RegExp | string): string {
  assert.is(r.status, status, `expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.type(r.body?.detail, 'string', `detail is a string: ${JSON.stringify(r.body)}`);
  if (typeof match === 'string') assert.is(r.body.detail, match);
  else if (match) assert.match(r.body.detail, match);
  return r.body.detail;
}
