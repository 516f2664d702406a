// The same loop on BullMQ against a local redis-server: W workers each repeat getNextJob → moveToCompleted.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import type { CycleSteps } from './loop.ts';

/** Redis persistence for the run: none (`--save '' --appendonly no`) or an fsync'd AOF (`appendfsync always`). */
export type RedisPersistence = 'none' | 'aof-always';

export interface RedisServer {
  port: number;
  pid: number;
  version: string;
  stop(): Promise<void>;
}

/** The redis-server version line, or undefined when it is not installed. */
export function redisVersion(): string | undefined {
  try {
    return /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1];
  } catch {
    return undefined;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Start a private redis-server on a free loopback port in a temp dir; `stop()` kills it and removes the dir. */
export async function startRedis(persistence: RedisPersistence): Promise<RedisServer> {
  const version = redisVersion();
  if (!version) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-redis-'));
  const port = await freePort();
  const persist = persistence === 'none' ? ['--save', '', '--appendonly', 'no'] : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning', ...persist], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if (execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG') break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port, pid: child.pid!, version,
    async stop() {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Add `n` jobs in chunks of 1000; returns seconds taken. */
export async function seedJobs(queue: Queue, n: number, chunk = 1000): Promise<number> {
  const t0 = Date.now();
  for (let i = 0; i < n; i += chunk) {
    await queue.addBulk(Array.from({ length: Math.min(chunk, n - i) }, (_, k) => ({ name: 'bench', data: { title: `bench task ${i + k}` } })));
  }
  return (Date.now() - t0) / 1000;
}

/**
 * W manual workers (own connections): next = `getNextJob(token, {block:false})` (one moveToActive script),
 * complete = `moveToCompleted(result, token, false)` (no fetch-next, so one call per step as in svc).
 */
export async function bullmqSteps(queueName: string, port: number, workers: number): Promise<{ steps: CycleSteps<Job>; close(): Promise<void> }> {
  const connection = { host: '127.0.0.1', port };
  const pool = Array.from({ length: workers }, () => new Worker(queueName, null, { connection, autorun: false }));
  await Promise.all(pool.map((w) => w.waitUntilReady()));
  const tokens = pool.map((_, i) => `bench-worker-${i}`);
  return {
    steps: {
      next: async (w) => (await pool[w]!.getNextJob(tokens[w]!, { block: false })) ?? undefined,
      complete: async (w, job) => { await job.moveToCompleted('done', tokens[w]!, false); },
    },
    close: async () => { await Promise.all(pool.map((w) => w.close())); },
  };
}
