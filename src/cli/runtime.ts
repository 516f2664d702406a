import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/index.ts';
import { systemClock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { createAuthenticator, createTenantGate, ensureAdminToken, ensureTenants } from '../auth/index.ts';
import { createSso, ssoRoutes } from '../auth/sso/index.ts';
import { acquireAuditWriter, createAuditLog, drainAuditInbox, reconcileAudit, type AuditLog } from '../observe/index.ts';
import { createServer, createMetrics } from '../server/index.ts';
import { VERSION } from './version.ts';
import { CliError } from './args.ts';
import { writeSvcShim } from './shim.ts';
import { createCommitter, createGit, createRecordStore, dropAuditIntents, errnoError, replayJournal, ulidIds, type AuditIntent, type Faults, type SddLayout } from '../store/index.ts';
import { TaskService, backfillRiskRecords, drainRoutes, recoverBatches, taskReadRoutes, taskWriteRoutes, TASK_SCHEMAS } from '../tasks/index.ts';
// --- orchestrator (agents domain) ---
import { agentRoutes, createOrchestrator, partialMergeRoutes, type SessionRecord } from '../agents/index.ts';
import { applyEnv, loadConfigFile } from '../config/index.ts';
import { openSse } from '../server/index.ts';
// --- end orchestrator ---
// --- webhooks ---
import { appendLogLine } from '../agents/index.ts';
import type { TrackerConfig } from '../config/index.ts';
import { isValidId } from '../store/index.ts';
import { createWebhooks, taskPort } from '../webhooks/index.ts';
// --- end webhooks ---

export interface RuntimeOptions {
  root: string;
  layout: SddLayout;
  config: Config;
  env: NodeJS.ProcessEnv;
  log: Logger;
}

export interface Runtime {
  host: string;
  port: number;
  tasks: TaskService;
  /** The agent sessions the orchestrator holds (they keep running when svc stops). */
  agents(): SessionRecord[];
  stop(): Promise<void>;
}

/** Build the Deps, recover state, and start the HTTP API (and, when enabled, the orchestrator). */
export async function startRuntime(o: RuntimeOptions): Promise<Runtime> {
  const { layout, config, log } = o;
  const clock = systemClock;
  const ids = ulidIds(clock.now);
  const git = createGit(o.root);
  const committer = createCommitter({ layout, git, log: log.withTag('state'), clock, intervalMs: config.state.commit_interval_ms, gcEveryCommits: config.state.gc_every_commits });
  await ensureTenants(layout);
  // Writes journaled before a crash or power loss reach their files before anything reads them.
  const intents: AuditIntent[] = [];
  await replayJournal(layout, log.withTag('store'), undefined, intents);
  const recovered = await committer.recover();
  if (recovered) log.info(`state recovered: ${recovered.message}`);
  const store = createRecordStore({ layout, committer, log: log.withTag('store'), faults: testFaults(o.env.SVC_TEST_FAULT_FILE), exclusive: true });
  const releaseAudit = await takeAuditWriter(layout, log);
  const audit = createAuditLog({ layout, clock, log: log.withTag('audit'), onAppend: (abs) => committer.touch(abs), faults: testFaults(o.env.SVC_TEST_AUDIT_FAULT_FILE) });
  // A change journaled with its audit entry whose record a crash prevented gets that record now.
  await reconcileAudit(layout, audit, intents, log.withTag('audit'));
  await dropAuditIntents(layout);
  const drainInbox = () => drainAuditInbox(layout, audit, log).catch((err) => log.error('audit inbox failed', err));
  await drainInbox();
  const inboxTimer = setInterval(drainInbox, 1000);
  inboxTimer.unref();
  const tenants = createTenantGate({ layout, log, defaultMax: config.tenants.default_max_tasks });
  const tasks = new TaskService({ layout, store, clock, ids, log: log.withTag('tasks'), audit, tenants, config });
  const rolled = await recoverBatches(tasks);
  if (rolled) log.info(`rolled forward ${rolled} task(s) of an interrupted batch`);
  log.info(`loaded ${await tasks.load()} task(s)`);
  // Tasks created before EU AI Act records existed, or a shared-tree crash between a task and its record.
  const backfilled = await backfillRiskRecords(tasks);
  if (backfilled) log.info(`wrote the EU AI Act record of ${backfilled} task(s)`);

  const authEnv = { authToken: o.env.SERVICE_AUTH_TOKEN || undefined, disabled: truthy(o.env.SERVICE_AUTH_DISABLED) || !config.auth.enabled };
  if (!authEnv.disabled && !authEnv.authToken) {
    const admin = await ensureAdminToken(layout, clock);
    if (admin.created) log.info(`created an admin token in ${admin.path} (0600); use it as 'Authorization: Bearer <token>'`);
  }
  const sso = await startSso(o, audit, (abs, text, note) => committer.touch(abs, note, text));
  const authenticator = createAuthenticator({ layout, env: authEnv, clock, log: log.withTag('auth'), ...(sso ? { sessions: sso.sso } : {}) });
  const metrics = createMetrics();
  metrics.gauge('svc_tasks', 'Tasks by status', 'status', () => tasks.board.counts() as unknown as Record<string, number>);
  metrics.gauge('svc_store_backlog', 'Acknowledged writes not yet on their file (files), in refs/sdd/state (state_paths), or checkpointed out of the journal (journal_bytes)', 'kind',
    () => ({ files: store.backlog, state_paths: committer.pending, journal_bytes: store.journalBytes }));
  const routes = [...drainRoutes(tasks), ...taskReadRoutes(tasks), ...taskWriteRoutes(tasks), ...ssoRoutes(sso)];
  // --- orchestrator (agents domain) ---
  const orchestrator = createOrchestrator({
    root: o.root, layout, git, store, svc: tasks, clock, log: log.withTag('agents'), config, env: o.env, svcBinDir: writeSvcShim(layout.runtime),
    reloadConfig: () => applyEnv(loadConfigFile(layout.config), o.env),
  });
  routes.push(...agentRoutes({ svc: tasks, layout, store, orchestrator, openSse }));
  routes.push(...partialMergeRoutes({ svc: tasks, git, layout, clock, baseBranch: () => orchestrator.baseBranch() }));
  // --- end orchestrator ---
  // --- webhooks ---
  // `trackers` is read from the config object the orchestrator updates when config.yaml changes.
  const webhooks = await createWebhooks({
    layout, tasks: taskPort(tasks), config: () => config.trackers as Record<string, TrackerConfig | undefined>, env: (name) => o.env[name],
    clock, log: log.withTag('webhooks'), registry: metrics.registry,
    sessions: {
      known: (sid) => isValidId(sid) && (orchestrator.sessions().some((s) => s.session_id === sid) || existsSync(layout.log(sid))),
      append: (sid, line) => appendLogLine(layout.log(sid), line),
    },
  });
  routes.push(...webhooks.routes);
  // --- end webhooks ---
  const hooks = { isDraining: () => tasks.draining, health: () => ({ tasks: tasks.board.size, draining: tasks.draining }) };
  const server = createServer({ routes, schemas: TASK_SCHEMAS, hooks, log: log.withTag('http'), config, authenticator, metrics, clock, version: VERSION });
  const addr = await server.listen(config.server.port, config.server.host);
  committer.start();
  // --- orchestrator (agents domain) ---
  const ownHost = ['0.0.0.0', '::', ''].includes(addr.host) ? '127.0.0.1' : addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  if (config.orchestrator.enabled) await orchestrator.start(`http://${ownHost}:${addr.port}`);
  // --- end orchestrator ---
  // --- webhooks ---
  for (const hint of webhooks.setupHints(`http://${ownHost}:${addr.port}`)) log.info(hint);
  // Tickets changed while the server was down; in the background, so the API is up meanwhile.
  void webhooks.startupPoll().then((r) => {
    const parts = [...Object.entries(r.delivered).map(([k, n]) => `${k} ${n} ticket(s)${r.timed_out.includes(k) ? ' (cut short)' : ''}`), ...Object.entries(r.errors).map(([k, e]) => `${k} failed: ${e}`)];
    if (parts.length) log.info(`startup poll: ${parts.join('; ')}`);
  }, (err: Error) => log.error('startup poll failed', err));
  // --- end webhooks ---

  return {
    host: addr.host,
    port: addr.port,
    tasks,
    agents: () => orchestrator.sessions(),
    async stop() {
      tasks.draining = true;
      // --- orchestrator (agents domain) ---
      await orchestrator.stop();
      // --- end orchestrator ---
      await server.close();
      // --- webhooks ---
      await webhooks.close();
      // --- end webhooks ---
      tasks.stopAuditRetries();
      clearInterval(inboxTimer);
      await drainInbox();
      await committer.stop();
      await audit.close();
      await releaseAudit();
      await store.close();
    },
  };
}

// SSO from auth.sso: the OIDC client secret from the variable client_secret_env names, SAML IdP metadata from its file.
async function startSso(o: RuntimeOptions, audit: AuditLog, onWrite: (abs: string, text: string, note: string) => void) {
  const cfg = o.config.auth.sso;
  const secretEnv = cfg.oidc?.client_secret_env;
  if (secretEnv && !o.env[secretEnv]) o.log.warn(`auth.sso.oidc.client_secret_env names ${secretEnv}, which is not set: using PKCE without a client secret`);
  const metadataFile = cfg.saml?.idp_metadata_file;
  try {
    return await createSso({
      config: cfg, layout: o.layout, clock: systemClock, log: o.log.withTag('sso'), audit, onWrite,
      ...(secretEnv && o.env[secretEnv] ? { oidcClientSecret: o.env[secretEnv] } : {}),
      ...(metadataFile ? { samlMetadataXml: readFileSync(resolve(o.root, metadataFile), 'utf8') } : {}),
    });
  } catch (err) {
    // A bad SSO setup (no IdP certificate, unreadable metadata, corrupt mappings file) stops the start with its reason.
    throw new CliError(`auth.sso: ${(err as Error).message}`);
  }
}

// A CLI holds the audit writer lock for one append (milliseconds); we hold the server lock, so a lock not
// refreshed for `graceMs` was left by a SIGKILLed server and would block us for its 10 s `stale` window.
async function takeAuditWriter(layout: SddLayout, log: Logger, graceMs = 1000): Promise<() => Promise<void>> {
  const lock = join(layout.runtime, 'audit-writer.lock');
  for (;;) {
    try {
      return await acquireAuditWriter(layout, log, false);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    if (age > graceMs) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  log.warn('audit writer lock left by a dead server: taking it over');
  rmSync(lock, { recursive: true, force: true });
  return acquireAuditWriter(layout, log);
}

/**
 * Test-only disk trouble (RELIABILITY.md), inert unless SVC_TEST_FAULT_FILE (store writes) or
 * SVC_TEST_AUDIT_FAULT_FILE (audit segment writes) is set: while that file
 * exists every such write fails with ENOSPC, or with the probability written in it (e.g. `0.3`).
 */
function testFaults(file: string | undefined): Faults | undefined {
  if (!file) return undefined;
  return {
    beforeWrite(path) {
      if (!existsSync(file)) return;
      const p = Number.parseFloat(readFileSync(file, 'utf8'));
      if (Number.isNaN(p) || Math.random() < p) throw errnoError('ENOSPC', path);
    },
  };
}

function truthy(v: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());
}
