// `svc worker`: run agents for a central server on this machine (INTERFACE.md Worker process parameters).
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { applyEnv, loadConfigFile } from '../config/index.ts';
import { systemClock } from '../lib/clock.ts';
import { createLogger } from '../lib/log.ts';
import { createGit, sddLayout } from '../store/index.ts';
import { runWorker, WorkerError, workerOptions, WORKER_DEFAULTS, type WorkerFlags } from '../worker/index.ts';
import { CliError, UsageError } from './args.ts';
import { command } from './command.ts';
import { shimReads, writeSvcShim } from './shim.ts';
import { VERSION } from './version.ts';
import { checkWorkTree, excludeSdd } from './workspace.ts';

const ARGS = {
  server: { type: 'string', valueHint: 'url', description: 'Central server URL (env SERVICE_SERVER_URL); required' },
  token: { type: 'string', description: 'Cluster secret or a token with node:register (env SERVICE_AUTH_TOKEN)' },
  name: { type: 'string', description: 'Node name (default: the host name)' },
  slots: { type: 'string', description: `Most agents at once (default ${WORKER_DEFAULTS.slots})` },
  roles: { type: 'string', valueHint: 'a,b,c', description: `Roles whose tasks it claims (default ${WORKER_DEFAULTS.roles.join(',')})` },
  label: { type: 'string', valueHint: 'k=v', description: 'A node label (repeatable)' },
  adapter: { type: 'string', description: 'Agent CLI to invoke (default: detected on PATH)' },
  model: { type: 'string', description: 'Model for tasks that name none (default: the adapter\'s)' },
  'poll-interval': { type: 'string', valueHint: 'seconds', description: `Task poll cadence (default ${WORKER_DEFAULTS.pollS})` },
  'poll-interval-ms': { type: 'string', valueHint: 'ms', description: 'Task poll cadence in milliseconds (overrides --poll-interval)' },
  'heartbeat-interval-ms': { type: 'string', valueHint: 'ms', description: `Heartbeat cadence (default ${WORKER_DEFAULTS.heartbeatMs})` },
  'grace-period': { type: 'string', valueHint: 'seconds', description: `On SIGINT/SIGTERM, how long running agents may finish before their tasks are released (default ${WORKER_DEFAULTS.graceS})` },
  'log-json': { type: 'boolean', description: 'One JSON object per log line' },
} as const;

/** Every `--label` given (the flag is repeatable; the strict parser keeps only the last). */
export function labelsOf(rawArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === '--') break;
    if (a === '--label') out.push(rawArgs[++i] ?? '');
    else if (a.startsWith('--label=')) out.push(a.slice('--label='.length));
  }
  return out;
}

export const workerCommand = command({ name: 'worker', description: 'Run agents for a central svc server on this machine (a cluster node)' }, ARGS, async ({ values, rawArgs, env }) => {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const flags: WorkerFlags = { labels: labelsOf(rawArgs) };
  for (const k of ['server', 'token', 'name', 'slots', 'roles', 'adapter', 'model', 'poll-interval', 'poll-interval-ms', 'heartbeat-interval-ms', 'workdir', 'grace-period'] as const) {
    const v = str(k);
    if (v !== undefined) flags[k] = v;
  }
  const parsed = workerOptions(flags, env, { hostname: hostname(), cwd: process.cwd() });
  if (!parsed.ok) throw new UsageError(parsed.error);
  const o = parsed.options;
  // INTERFACE.md Errors rule 5: a setup error naming the path, before registering.
  let root: string;
  try {
    const wt = checkWorkTree(resolve(o.workdir));
    root = wt.root;
    excludeSdd(wt.gitCommonDir);
  } catch (err) {
    throw new CliError(`workspace: ${(err as Error).message}; a worker needs a clone of the project (git clone <server>/repo.git)`);
  }
  const log = createLogger({ json: Boolean(values['log-json']) });
  const layout = sddLayout(root);
  const config = applyEnv(loadConfigFile(layout.config), env);
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log.info(`received ${sig}: stopping the worker`);
      stop.abort();
    });
  }
  try {
    await runWorker({ options: { ...o, workdir: root }, git: createGit(root), layout, config, clock: systemClock, log, version: VERSION, env, svcBinDir: writeSvcShim(layout.runtime), svcReadable: shimReads() }, stop.signal);
  } catch (err) {
    if (err instanceof WorkerError) throw new CliError(err.message);
    throw err;
  }
  process.exit(0);
});
