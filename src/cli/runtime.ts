import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { retry } from '../lib/retry.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { createAuthenticator, createTenantGate, ensureAdminToken, ensureTenants } from '../auth/index.ts';
import { acquireAuditWriter, drainAuditInbox, openAuditChain } from '../observe/index.ts';
import { createServer, createMetrics } from '../server/index.ts';
import { VERSION } from './version.ts';
import { createCommitter, createGit, createOwnedStore, errnoError, replayJournal, ulidIds, type Faults, type Ids, type SddLayout } from '../store/index.ts';
import { TaskService, drainRoutes, taskReadRoutes, taskWriteRoutes, TASK_SCHEMAS } from '../tasks/index.ts';
// --- orchestrator (agents domain) ---
import { agentRoutes, createOrchestrator, partialMergeRoutes } from '../agents/index.ts';
import { applyEnv, loadConfigFile } from '../config/index.ts';
import { openSse } from '../server/index.ts';
// --- end orchestrator ---

export interface RuntimeOptions {
  root: string;
  layout: SddLayout;
  config: Config;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Time, ids and timers (system ones by default; tests pass manual ones). */
  clock?: Clock;
  ids?: Ids;
  timers?: Timers;
}

export interface Runtime {
  host: string;
  port: number;
  tasks: TaskService;
  stop(): Promise<void>;
}

/** Build the Deps, recover state, and start the HTTP API (and, when enabled, the orchestrator). */
export async function startRuntime(o: RuntimeOptions): Promise<Runtime> {
  const { layout, config, log } = o;
  const clock = o.clock ?? systemClock;
  const ids = o.ids ?? ulidIds(clock.now);
  const timers = o.timers ?? systemTimers;
  const git = createGit(o.root);
  const committer = createCommitter({ layout, git, log: log.withTag('state'), clock, intervalMs: config.state.commit_interval_ms, gcEveryCommits: config.state.gc_every_commits });
  await ensureTenants(layout);
  // The chain's writer lock before the replay: no CLI may append between the journaled records and the segment.
  const releaseAudit = await takeAuditWriter(layout, log, clock, timers);
  // Every journaled change reaches its files (task files, audit segments, archive) before anything reads them.
  await replayJournal(layout, log.withTag('store'));
  const recovered = await committer.recover();
  if (recovered) log.info(`state recovered: ${recovered.message}`);
  const chain = await openAuditChain({ layout, clock, log: log.withTag('audit') });
  const store = createOwnedStore({ layout, committer, log: log.withTag('store'), faults: testFaults(layout, o.env), timers, sealer: chain });
  // CLI records queued while we hold the chain: each journaled with its file's deletion (exactly once).
  let draining: Promise<unknown> | undefined;
  const drainInbox = () => (draining ??= drainAuditInbox(layout, (entry, file) => store.emit({ audit: entry, removes: [file] }), log)
    .catch((err) => log.error('audit inbox failed', err)).finally(() => { draining = undefined; }));
  await drainInbox();
  const inboxTimer = timers.setInterval(drainInbox, 1000);
  const tenants = createTenantGate({ layout, log, defaultMax: config.tenants.default_max_tasks });
  const tasks = new TaskService({ layout, store, clock, ids, log: log.withTag('tasks'), tenants, config });
  log.info(`loaded ${await tasks.load()} task(s)`);

  const authEnv = { authToken: o.env.SERVICE_AUTH_TOKEN || undefined, disabled: truthy(o.env.SERVICE_AUTH_DISABLED) || !config.auth.enabled };
  if (!authEnv.disabled && !authEnv.authToken) {
    const admin = await ensureAdminToken(layout, clock);
    if (admin.created) log.info(`created an admin token in ${admin.path} (0600); use it as 'Authorization: Bearer <token>'`);
  }
  const authenticator = createAuthenticator({ layout, env: authEnv, clock, log: log.withTag('auth') });
  const metrics = createMetrics();
  metrics.gauge('svc_tasks', 'Tasks by status', 'status', () => tasks.board.counts() as unknown as Record<string, number>);
  metrics.gauge('svc_store_backlog', 'Acknowledged writes not yet on their file (files), in refs/sdd/state (state_paths), or checkpointed out of the journal (journal_bytes)', 'kind',
    () => ({ files: store.backlog, state_paths: committer.pending, journal_bytes: store.journalBytes }));
  const routes = [...drainRoutes(tasks), ...taskReadRoutes(tasks), ...taskWriteRoutes(tasks)];
  // --- orchestrator (agents domain) ---
  const orchestrator = createOrchestrator({
    root: o.root, layout, git, store, svc: tasks, clock, log: log.withTag('agents'), config, env: o.env,
    reloadConfig: () => applyEnv(loadConfigFile(layout.config), o.env),
  });
  routes.push(...agentRoutes({ svc: tasks, layout, store, orchestrator, openSse }));
  routes.push(...partialMergeRoutes({ svc: tasks, git, layout, clock, baseBranch: () => orchestrator.baseBranch() }));
  // --- end orchestrator ---
  const hooks = { isDraining: () => tasks.draining, health: () => ({ tasks: tasks.board.size, draining: tasks.draining }) };
  const server = createServer({ routes, schemas: TASK_SCHEMAS, hooks, log: log.withTag('http'), config, authenticator, metrics, clock, version: VERSION });
  const addr = await server.listen(config.server.port, config.server.host);
  committer.start();
  // --- orchestrator (agents domain) ---
  const ownHost = ['0.0.0.0', '::', ''].includes(addr.host) ? '127.0.0.1' : addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  if (config.orchestrator.enabled) await orchestrator.start(`http://${ownHost}:${addr.port}`);
  // --- end orchestrator ---

  return {
    host: addr.host,
    port: addr.port,
    tasks,
    async stop() {
      tasks.draining = true;
      // --- orchestrator (agents domain) ---
      await orchestrator.stop();
      // --- end orchestrator ---
      await server.close();
      timers.clearInterval(inboxTimer);
      await draining;
      await drainInbox();
      // Files and lines behind the journal first, so the last state commit has them.
      await store.close();
      await committer.stop();
      await releaseAudit();
    },
  };
}

// A CLI holds the audit writer lock for one append (milliseconds); we hold the server lock, so a lock not
// refreshed for `graceMs` was left by a SIGKILLed server and would block us for its 10 s `stale` window.
async function takeAuditWriter(layout: SddLayout, log: Logger, clock: Clock, timers: Timers, graceMs = 1000): Promise<() => Promise<void>> {
  const lock = join(layout.runtime, 'audit-writer.lock');
  const fresh = () => clock.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) <= graceMs;
  try {
    return await retry(() => acquireAuditWriter(layout, log, false), {
      timers, minMs: 50, maxMs: 50, retryable: (err) => (err as NodeJS.ErrnoException).code === 'ELOCKED' && fresh(),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
  }
  log.warn('audit writer lock left by a dead server: taking it over');
  rmSync(lock, { recursive: true, force: true });
  return acquireAuditWriter(layout, log);
}

/**
 * Test-only disk trouble (RELIABILITY.md), inert unless set: while the file SVC_TEST_FAULT_FILE names
 * exists every write to `.sdd` fails with ENOSPC (or with the probability written in it, e.g. `0.3`);
 * SVC_TEST_AUDIT_FAULT_FILE does the same for the audit segments only.
 */
function testFaults(layout: SddLayout, env: NodeJS.ProcessEnv): Faults | undefined {
  const all = faultFile(env.SVC_TEST_FAULT_FILE);
  const audit = faultFile(env.SVC_TEST_AUDIT_FAULT_FILE);
  if (!all && !audit) return undefined;
  return {
    beforeWrite(path) {
      all?.(path);
      if (path.startsWith(layout.auditDir + '/')) audit?.(path);
    },
  };
}

function faultFile(file: string | undefined): ((path: string) => void) | undefined {
  if (!file) return undefined;
  return (path) => {
    if (!existsSync(file)) return;
    const p = Number.parseFloat(readFileSync(file, 'utf8'));
    if (Number.isNaN(p) || Math.random() < p) throw errnoError('ENOSPC', path);
  };
}

function truthy(v: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());
}
