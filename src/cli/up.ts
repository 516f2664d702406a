import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { applyEnv, loadConfigFile, ConfigError, type Config } from '../config/index.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { createGit } from '../store/git-cli.ts';
import { sddLayout, type SddLayout } from '../store/layout.ts';
import { scanEarly } from '../store/start-early.ts';
import { CliError, intArg } from './args.ts';
import { readJsonQuiet } from './client.ts';
import { command, type Values } from './command.ts';
import { followHeapGrowth, setHeapGrowth } from './heap-growth.ts';
import { assertPortFree, portOwner } from './port.ts';
import type { Runtime } from './runtime.ts';
import { takeServerLock } from './server-lock.ts';
import { checkWorkTree, excludeSdd, initSdd } from './workspace.ts';

const ARGS = {
  host: { type: 'string', valueHint: 'address', description: 'Listen address (default 127.0.0.1, env SERVICE_HOST)' },
  port: { type: 'string', valueHint: 'port', description: 'Port (default 8052, env SERVICE_PORT; 0 = any free port)' },
  'max-agents': { type: 'string', valueHint: 'n', description: 'Agents running at once (default 4, env SERVICE_MAX_AGENTS)' },
  'tick-ms': { type: 'string', valueHint: 'ms', description: 'How often the orchestrator looks for work (default 3000)' },
  'batch-size': { type: 'string', valueHint: 'n', description: 'Tasks started per tick at most (default 3)' },
  orchestrator: { type: 'boolean', description: 'Run the orchestrator (--no-orchestrator: serve the API only)' },
  'log-json': { type: 'boolean', description: 'Log one JSON object per line' },
  'grpc-port': { type: 'string', valueHint: 'port', description: 'Serve the cluster RPC on this port (0 = any free port; default: off, or cluster.grpc.port)' },
} as const;

// config.yaml (absent: defaults), then the environment, then the flags.
function configure(layout: SddLayout, values: Values, env: NodeJS.ProcessEnv): Config {
  let config: Config;
  try {
    config = applyEnv(loadConfigFile(layout.config), env);
  } catch (err) {
    throw new CliError(err instanceof ConfigError ? err.message : String(err));
  }
  const port = intArg('port', values.port, 0, 65535);
  if (values.host !== undefined) config.server.host = String(values.host);
  if (port !== undefined) config.server.port = port;
  config.orchestrator.max_agents = intArg('max-agents', values['max-agents'], 0, 10_000) ?? config.orchestrator.max_agents;
  config.orchestrator.tick_ms = intArg('tick-ms', values['tick-ms'], 10, 3_600_000) ?? config.orchestrator.tick_ms;
  config.orchestrator.batch_size = intArg('batch-size', values['batch-size'], 1, 10_000) ?? config.orchestrator.batch_size;
  if (values.orchestrator === false) config.orchestrator.enabled = false;
  config.cluster.grpc.port = intArg('grpc-port', values['grpc-port'], 0, 65535) ?? config.cluster.grpc.port;
  return config;
}

// A busy port is checked before any side effect; when this tree's own svc holds it, say that instead.
async function checkPort(layout: SddLayout, config: Config): Promise<void> {
  try {
    await assertPortFree(config.server.host, config.server.port);
  } catch (err) {
    const info = readJsonQuiet<{ pid?: number; port?: number }>(layout.serverInfo);
    if (info?.pid && info.port === config.server.port && portOwner(config.server.port) === info.pid) {
      throw new CliError(`svc is already running on this repository (pid ${info.pid}, port ${info.port})`);
    }
    throw err;
  }
}

/** What Ctrl-C leaves running: agents keep working, and the next start adopts them. */
export function stopMessage(signal: string, agents: ReturnType<Runtime['agents']>): string {
  const running = agents.filter((a) => a.status === 'running' || a.status === 'starting');
  if (running.length === 0) return `${signal}: stopped; no agent was running`;
  const list = running.map((a) => `${a.session_id} (pid ${a.pid ?? '?'}, task ${a.task_id})`).join(', ');
  return `${signal}: stopped; ${running.length} agent(s) keep running: ${list}. The next 'svc up' here adopts them ('svc kill SID' stops one).`;
}

function untilSignal(runtime: Runtime, log: Logger, release: () => Promise<void>): Promise<void> {
  return new Promise<void>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info(`${signal}: draining, final state commit, releasing the lock`);
      const agents = runtime.agents();
      runtime.stop().catch((err) => log.error('shutdown failed', err)).finally(() => {
        log.info(stopMessage(signal, agents));
        release().finally(done);
      });
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
}

/** `svc up` / `svc run`: serve the repository's task board and run its agents until SIGINT/SIGTERM. */
export const upCommand = (name: string) =>
  command({ name, description: name === 'up' ? 'Serve the task API for a repository and run its orchestrator' : 'Same as svc up' }, ARGS, async ({ values, env }) => {
    const log = createLogger({ json: Boolean(values['log-json']) });
    // The heap may grow 50% past what a full GC kept while the board loads (a full GC every 20% of growth cost
    // 0.7 s of CPU at 100k tasks; 50% costs no more than 100% did, and the start's peak RSS is no higher:
    // bench/README.md "Start and memory at 100k"); once serving, an absolute headroom (heap-growth.ts).
    setHeapGrowth(env, 50);
    const { root, gitCommonDir } = checkWorkTree(resolve(String(values.workdir ?? process.cwd())));
    const layout = sddLayout(root);
    const config = configure(layout, values, env);
    await checkPort(layout, config);
    const { restored } = initSdd(root, { server: true });
    excludeSdd(gitCommonDir);
    const release = await takeServerLock(layout.serverLock, layout.serverInfo, log);
    writeFileSync(layout.serverInfo, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }) + '\n');
    // On a large board the comparison with refs/sdd/state begins now, on its thread, while the server's
    // modules load (~0.5 s at 100k tasks: bench/README.md "start"); the rest of the server is imported here.
    const early = await scanEarly(layout, createGit(root, { commonDir: gitCommonDir })).catch(async (err: unknown) => { await release(); throw err; });
    const { startRuntime } = await import('./runtime.ts');
    const runtime = await startRuntime({ root, layout, restored, config, env, log, early }).catch(async (err: NodeJS.ErrnoException) => {
      await release();
      if (err.code === 'EADDRINUSE') throw new CliError(`port ${config.server.port} is in use; use --port`);
      throw err;
    });
    followHeapGrowth(env);
    writeFileSync(layout.serverInfo, JSON.stringify({ pid: process.pid, host: runtime.host, port: runtime.port, ...(runtime.grpcPort === null ? {} : { grpc_port: runtime.grpcPort }), started_at: new Date().toISOString() }) + '\n');
    log.success(`svc listening on http://${runtime.host}:${runtime.port} for ${root}`);
    await untilSignal(runtime, log, release);
    process.exit(0);
  });
