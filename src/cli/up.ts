import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { applyEnv, loadConfigFile, ConfigError } from '../config/index.ts';
import { createLogger } from '../lib/log.ts';
import { sddLayout } from '../store/layout.ts';
import { CliError, intArg } from './args.ts';
import { command } from './command.ts';
import { startRuntime } from './runtime.ts';
import { takeServerLock } from './server-lock.ts';
import { checkWorkTree, excludeSdd, initSdd } from './workspace.ts';

const ARGS = {
  host: { type: 'string', description: 'Listen address (default 127.0.0.1, env SERVICE_HOST)' },
  port: { type: 'string', description: 'Port (default 8052, env SERVICE_PORT; 0 = any free port)' },
  'max-agents': { type: 'string', description: 'Concurrent agents (env SERVICE_MAX_AGENTS)' },
  'tick-ms': { type: 'string', description: 'Orchestrator tick in ms (default 3000)' },
  'batch-size': { type: 'string', description: 'Tasks dispatched per tick (default 3)' },
  orchestrator: { type: 'boolean', description: 'Run the orchestrator (--no-orchestrator: API only)' },
  'log-json': { type: 'boolean', description: 'Log one JSON object per line' },
} as const;

/** `svc up` / `svc run`: serve the repository's task board and run its agents until SIGINT/SIGTERM. */
export const upCommand = (name: string) =>
  command({ name, description: 'Serve the task API for a repository and run its orchestrator' }, ARGS, async ({ values, env }) => {
    const log = createLogger({ json: Boolean(values['log-json']) });
    const { root, gitCommonDir } = checkWorkTree(resolve(String(values.workdir ?? process.cwd())));
    const layout = sddLayout(root);
    const { restored } = initSdd(root);
    excludeSdd(gitCommonDir);
    let config;
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

    const release = await takeServerLock(layout.serverLock, layout.serverInfo, log);
    writeFileSync(layout.serverInfo, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }) + '\n');
    const runtime = await startRuntime({ root, layout, restored, config, env, log }).catch(async (err) => {
      await release();
      throw err;
    });
    writeFileSync(layout.serverInfo, JSON.stringify({ pid: process.pid, host: runtime.host, port: runtime.port, started_at: new Date().toISOString() }) + '\n');
    log.success(`svc listening on http://${runtime.host}:${runtime.port} for ${root}`);

    await new Promise<void>((done) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info(`${signal}: draining, final state commit, releasing the lock`);
        runtime.stop().catch((err) => log.error('shutdown failed', err)).finally(() => release().finally(done));
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });
    process.exit(0);
  });
