import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config/index.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { retry } from '../lib/retry.ts';
import { systemTimers, type Timers } from '../lib/timers.ts';
import { createAuthenticator, createTenantGate, ensureAdminToken, ensureTenants, holdsScope } from '../auth/index.ts';
import { createSso, ssoRoutes } from '../auth/sso/index.ts';
import { acquireAuditWriter, createBoardSource, createObservability, drainAuditInbox, listSegments, openAuditChain, tapProgress, stateCommitMetrics, type AuditEntry } from '../observe/index.ts';
import { createServer, createMetrics } from '../server/index.ts';
import { stateGitRoutes } from '../state/index.ts';
import { CliError } from './args.ts';
import { PACKAGE_ROOT, VERSION } from './version.ts';
import { shimReads, writeSvcShim } from './shim.ts';
import { commitEdits, createCommitter, createGit, createStateMirror, createOwnedStore, dropJournalDeletes, errnoError, replayJournal, startMessage, refCommit, STATE_REF, ulidIds, type Faults, type Ids, type RecoverOptions, type RestoreResult, type SddLayout, type SnapshotVerdict, type StateCommitter } from '../store/index.ts';
import type { EarlyScan } from '../store/start-scan.ts';
import { openTasks, TASK_SCHEMAS, type Tasks, type TasksDomain } from '../tasks/index.ts';
// --- orchestrator (agents domain) ---
import { agentRoutes, createOrchestrator, killRequester, partialMergeRoutes, type SessionRecord } from '../agents/index.ts';
import { applyEnv, loadConfigFile } from '../config/index.ts';
import { openSse } from '../server/index.ts';
// --- end orchestrator ---
// --- repo ---
import { repoGitRoutes, type RepoAccess } from '../repo/index.ts';
// --- end repo ---
// --- webhooks ---
import { appendLogLine } from '../agents/index.ts';
import type { TrackerConfig } from '../config/index.ts';
import { isValidId } from '../store/index.ts';
import { createWebhooks, taskPort } from '../webhooks/index.ts';
// --- end webhooks ---
// --- mcp ---
import { createMcp } from '../mcp/index.ts';
// --- end mcp ---
// --- cluster ---
import { createCluster, type Cluster } from '../cluster/index.ts';
// --- end cluster ---

export interface RuntimeOptions {
  root: string;
  layout: SddLayout;
  /** What `svc up` restored from refs/sdd/state before the template (workspace.ts initSdd). */
  restored?: RestoreResult | null;
  /** The comparison with the ref `svc up` began before loading this module (start-scan.ts scanEarly). */
  early?: EarlyScan | null;
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
  /** Port of the cluster RPC, or null when it is off. */
  grpcPort: number | null;
  tasks: Tasks;
  /** The agent sessions the orchestrator holds (they keep running when svc stops). */
  agents(): SessionRecord[];
  stop(): Promise<void>;
}

/** Build the Deps, recover state, and start the HTTP API (and, when enabled, the orchestrator). */
export async function startRuntime(o: RuntimeOptions): Promise<Runtime> {
  const { layout, config, log } = o;
  if (!truthy(o.env.SERVICE_AUTH_DISABLED) && config.auth.enabled) checkAdminToken(o.env.SERVICE_AUTH_TOKEN || undefined);
  const clock = o.clock ?? systemClock;
  const ids = o.ids ?? ulidIds(clock.now);
  const timers = o.timers ?? systemTimers;
  const git = createGit(o.root);
  const metrics = createMetrics();
  // /state.git serves from a mirror that holds only the state history; commits nudge it while fetches come.
  const mirror = createStateMirror({ git, gitCommonDir: await git.commonDir(), log: log.withTag('state'), now: clock.now });
  const committer = createCommitter({
    layout, git, log: log.withTag('state'), clock, intervalMs: config.state.commit_interval_ms, gcEveryCommits: config.state.gc_every_commits,
    onCommit: () => mirror.nudge(), onAttempt: stateCommitMetrics(metrics.registry),
  });
  await ensureTenants(layout);
  // The chain's writer lock before the replay: no CLI may append between the journaled records and the segment.
  const releaseAudit = await takeAuditWriter(layout, log, clock, timers);
  // Every journaled change reaches its files (task files, audit segments, archive) before anything reads them.
  const deleted: string[] = [];
  await replayJournal(layout, log.withTag('store'), undefined, deleted);
  // The files are compared with the ref (on a thread of its own for a large board) while the board loads:
  // both only read, and restored files appear whole, so the board reads the folders of those restored
  // meanwhile again at its end. What writes `.sdd` at start (the audit inbox, EU AI Act backfill) waits for the whole.
  // The comparison also says which tasks of the last stop's board snapshot still match their files.
  let filesThere!: (paths: readonly string[]) => void;
  const restored = new Promise<readonly string[]>((resolve) => { filesThere = resolve; });
  let judged!: (verdict: SnapshotVerdict | null) => void;
  const verdict = new Promise<SnapshotVerdict | null>((resolve) => { judged = resolve; });
  const recovering = recoverState(layout, committer, { deletions: new Set(deleted), before: o.restored, early: o.early ?? null, onRestored: filesThere, snapshot: layout.boardSnapshot, onSnapshot: judged }, log);
  const restoredTasks = Promise.race([restored, recovering.then(() => [] as readonly string[])]);
  const snapshot = { file: layout.boardSnapshot, verdict: Promise.race([verdict, recovering.then(() => null)]) };
  restoredTasks.catch(() => undefined); // a failed recover fails the start where it is awaited, never unhandled
  snapshot.verdict.catch(() => undefined);
  await warnMissingAuditKey(layout, log);
  const chain = await openAuditChain({ layout, clock, log: log.withTag('audit') });
  const store = createOwnedStore({ layout, committer, log: log.withTag('store'), faults: testFaults(layout, o.env), timers, sealer: chain });
  // Audit records of other domains (SSO, exports) are journaled like a task change's: in chain order, exactly once.
  const audit = { append: (entry: AuditEntry) => store.emit({ audit: entry }) };
  const tenants = createTenantGate({ layout, log, defaultMax: config.tenants.default_max_tasks });
  const domain = await openTasks({ layout, store, clock, ids, log: log.withTag('tasks'), tenants, config, timers }, restoredTasks, snapshot);
  const { tasks } = domain;
  log.info(`loaded ${domain.loaded} task(s)${domain.fromSnapshot ? ` (${domain.fromSnapshot} from the board snapshot)` : ''}`);
  // Tasks created before EU AI Act records existed, or a shared-tree crash between a task and its record:
  // found once the folder is compared (read once restored), written after the inbox below.
  let mayWrite!: () => void;
  const backfilling = domain.backfill({ readable: restoredTasks.then(() => committer.compared), writable: new Promise<void>((resolve) => { mayWrite = resolve; }) });
  backfilling.catch(() => undefined); // its error is recover's (awaited below) or surfaces where it is awaited
  const left = await recovering;
  // CLI records queued while we hold the chain: each journaled with its file's deletion (exactly once).
  let draining: Promise<unknown> | undefined;
  const drainInbox = () => (draining ??= drainAuditInbox(layout, (entry, file) => store.emit({ audit: entry, removes: [file] }), log)
    .catch((err) => log.error('audit inbox failed', err)).finally(() => { draining = undefined; }));
  await drainInbox();
  const inboxTimer = timers.setInterval(drainInbox, 1000);
  mayWrite();
  // The folder left for after the start is compared once the server serves: the backfill follows it there.
  const said = (n: number) => { if (n) log.info(`wrote the EU AI Act record of ${n} task(s)`); };
  const backfilled = left ? backfilling.then(said, (err: Error) => log.error('EU AI Act backfill failed', err)) : said(await backfilling);

  // --- cluster: before the authenticator, which asks it about the cluster secret and node tokens ---
  const cluster = await startCluster(o, { store, tasks, installNodeHooks: domain.installNodeHooks, audit, registry: metrics.registry, killRequested: (sid) => killRequester(layout, sid), stateHead: () => refCommit(git, STATE_REF) });
  // --- end cluster ---
  const authEnv = { authToken: o.env.SERVICE_AUTH_TOKEN || undefined, disabled: truthy(o.env.SERVICE_AUTH_DISABLED) || !config.auth.enabled };
  if (!authEnv.disabled && !authEnv.authToken) {
    const admin = await ensureAdminToken(layout, clock);
    if (admin.created) log.info(`created an admin token in ${admin.path} (0600); use it as 'Authorization: Bearer <token>'`);
  }
  const sso = await startSso(o, audit, (abs, _text, note) => committer.touch(abs, note));
  const authenticator = createAuthenticator({ layout, env: authEnv, clock, log: log.withTag('auth'), cluster: cluster.tokens, ...(sso ? { sessions: sso.sso } : {}) });
  metrics.gauge('svc_store_backlog', 'Acknowledged writes not yet on their file (files), in refs/sdd/state (state_paths), or checkpointed out of the journal (journal_bytes)', 'kind',
    () => ({ files: store.backlog, state_paths: committer.pending, journal_bytes: store.journalBytes }));
  // --- observe: status, SLOs, Grafana, exports, SBOM, /dashboard/data, /events, the board page ---
  let sessions: () => SessionRecord[] = () => [];
  let sandbox = (): { mode: string; reason: string } => ({ mode: 'none', reason: 'the orchestrator is off: no agents run' });
  const source = createBoardSource({ tasks, store, layout, audit, maxAgents: () => config.orchestrator.max_agents, sessions: () => sessions(), sandbox: () => sandbox() });
  const observe = createObservability({
    source, registry: metrics.registry, clock, log: log.withTag('observe'), config: config.observe, version: VERSION, openSse, git,
    packageRoot: PACKAGE_ROOT, uuid: () => randomUUID(),
  });
  await observe.start();
  const taskRoutes = tapProgress(domain.routes.write, observe.progressed, () => clock.iso());
  // --- end observe ---
  const routes = [...domain.routes.drain, ...domain.routes.read, ...taskRoutes, ...ssoRoutes(sso), ...stateGitRoutes({ mirror, log: log.withTag('state') }), ...observe.routes];
  // --- orchestrator (agents domain) ---
  const orchestrator = createOrchestrator({
    root: o.root, layout, git, store, svc: tasks, clock, log: log.withTag('agents'), config, env: o.env, svcBinDir: writeSvcShim(layout.runtime), svcReadable: shimReads(),
    reloadConfig: () => applyEnv(loadConfigFile(layout.config), o.env), observer: observe.observer, timers,
  });
  sessions = () => orchestrator.sessions();
  if (config.orchestrator.enabled) sandbox = () => orchestrator.sandbox();
  routes.push(...agentRoutes({ svc: tasks, layout, store, orchestrator, openSse }));
  routes.push(...partialMergeRoutes({ svc: tasks, git, layout, clock, baseBranch: () => orchestrator.baseBranch(), sessions: () => orchestrator.sessions() }));
  // --- end orchestrator ---
  // --- repo: /repo.git for cluster nodes (fetch the base, push held agent branches) ---
  routes.push(...repoGitRoutes({ gitdir: await git.commonDir(), base: () => orchestrator.baseBranch(), log: log.withTag('repo'), ...repoAccess(tasks) }));
  // --- end repo ---
  // --- webhooks ---
  // `trackers` is read from the config object the orchestrator updates when config.yaml changes.
  const webhooks = await createWebhooks({
    layout, tasks: taskPort(tasks, tenants.scope), config: () => config.trackers as Record<string, TrackerConfig | undefined>, env: (name) => o.env[name],
    clock, log: log.withTag('webhooks'), registry: metrics.registry,
    sessions: {
      known: (sid) => isValidId(sid) && (orchestrator.sessions().some((s) => s.session_id === sid) || existsSync(layout.log(sid))),
      append: (sid, line) => appendLogLine(layout.log(sid), line),
    },
  });
  routes.push(...webhooks.routes);
  // --- end webhooks ---
  // --- mcp: tools over the task routes above (their access and task scope), progress told to the board feed ---
  const mcp = createMcp({
    tasks, routes, version: VERSION, log: log.withTag('mcp'), clock, newId: () => randomUUID(), publicUrl: config.auth.sso.public_url,
    onProgress: (t, p) => observe.progressed(t.id, t.tenant, { percent: p.percent ?? null, message: p.message ?? null, ts: clock.iso() }),
  });
  routes.push(...mcp.routes);
  // --- end mcp ---
  routes.push(...cluster.routes);
  // Details for unbound admins and operators only (system-routes.ts): totals and how agents are contained.
  const hooks = { isDraining: () => tasks.draining, health: () => ({ tasks: tasks.size, draining: tasks.draining, agents_sandbox: orchestrator.sandbox() }) };
  const server = createServer({ routes, schemas: TASK_SCHEMAS, hooks, tenantScope: tenants.scope, log: log.withTag('http'), config, authenticator, metrics, clock, version: VERSION });
  const addr = await server.listen(config.server.port, config.server.host);
  committer.start();
  cluster.start();
  const grpcPort = await cluster.startRpc(authenticator, config.server.host).catch(async (err: NodeJS.ErrnoException) => {
    await server.close();
    throw new CliError(`cluster RPC: ${err.message}`);
  });
  const stopEdits = await commitEdits({ layout, files: [layout.config, layout.tenants], committer, log: log.withTag('state') });
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
  // Started: what the recover left for now (a large board's EU AI Act folder after a clean stop) is compared.
  committer.finishStart();

  return {
    host: addr.host,
    port: addr.port,
    grpcPort,
    tasks,
    agents: () => orchestrator.sessions(),
    async stop() {
      tasks.drain(true);
      observe.stop();
      // --- orchestrator (agents domain) ---
      await orchestrator.stop();
      // --- end orchestrator ---
      await mcp.close();
      await server.close();
      await cluster.stop();
      // --- webhooks ---
      await webhooks.close();
      // --- end webhooks ---
      timers.clearInterval(inboxTimer);
      await draining;
      await drainInbox();
      await stopEdits();
      await backfilled;
      // Files and lines behind the journal first, so the last state commit has them. The board no longer
      // changes: its snapshot is written meanwhile (the next start trusts it per file, never as a whole).
      await store.close();
      await Promise.all([committer.stop(), saveBoard(domain, layout.boardSnapshot, log)]);
      mirror.close();
      await releaseAudit();
    },
  };
}

// The cluster (registry, node tokens); a bad SERVICE_CLUSTER_SECRET or secret file stops the start with its reason.
async function startCluster(o: RuntimeOptions, d: Pick<Parameters<typeof createCluster>[0], 'store' | 'tasks' | 'installNodeHooks' | 'audit' | 'registry' | 'killRequested' | 'stateHead'>): Promise<Cluster> {
  try {
    return await createCluster({ ...d, layout: o.layout, clock: systemClock, log: o.log.withTag('cluster'), config: o.config.cluster, secret: o.env.SERVICE_CLUSTER_SECRET || undefined });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) throw err;
    throw new CliError(`cluster: ${(err as Error).message}`);
  }
}

// SSO from auth.sso: the OIDC client secret from the variable client_secret_env names, SAML IdP metadata from its file.
async function startSso(o: RuntimeOptions, audit: { append(entry: AuditEntry): Promise<unknown> }, onWrite: (abs: string, text: string, note: string) => void) {
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

// Under the server lock: write back what is still missing (journaled deletes excepted), commit what
// differs and the journaled deletes, then say in words what happened. After a clean stop, a large board's
// EU AI Act folder is left for after the start (committer.finishStart): the folder it returns, or null.
async function recoverState(layout: SddLayout, committer: StateCommitter, o: Omit<RecoverOptions, 'restored'> & { before: RestoreResult | null | undefined }, log: Logger): Promise<string | null> {
  // The per-task folders are restored here (initSdd restored only the rest), from the listings the recover makes.
  const { before, ...rest } = o;
  const { report, rest: left } = await committer.recover({ ...rest, restore: true, later: true, ...(before ? { restored: before } : {}) });
  await dropJournalDeletes(layout);
  log.info(startMessage(report));
  return left;
}

// A failed snapshot costs the next start its reads, nothing else: said, never thrown.
async function saveBoard(domain: TasksDomain, file: string, log: Logger): Promise<void> {
  try {
    await domain.saveSnapshot(file);
  } catch (err) {
    log.warn('board snapshot not written: the next start reads every task file', { err: (err as Error).message });
  }
}

// A clone has the audit segments (committed) but never the key (a secret): say what that means.
async function warnMissingAuditKey(layout: SddLayout, log: Logger): Promise<void> {
  if (existsSync(layout.auditKey) || !(await listSegments(layout.auditDir)).length) return;
  log.warn(`audit: ${layout.auditKey} is missing but ${layout.auditDir} already holds a chain (from refs/sdd/state): a new key is created and the chain goes on with it. The records before now verify only with the key that signed them: copy .sdd/secrets/audit.key from the machine that wrote them to check them.`);
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

/** A guessable admin token is refused before anything listens. */
export const MIN_AUTH_TOKEN_LENGTH = 32;
function checkAdminToken(token: string | undefined): void {
  if (token === undefined || token.length >= MIN_AUTH_TOKEN_LENGTH) return;
  throw new CliError(`SERVICE_AUTH_TOKEN is ${token.length} characters long; an admin token needs at least ${MIN_AUTH_TOKEN_LENGTH} (for example: openssl rand -hex 32), or unset it to use .sdd/secrets/admin.token`);
}

function truthy(v: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());
}

// Who is a node (a node token names it), who may fetch the code (nodes, the cluster secret, admins), and
// which sessions a node holds: its claimed and in-progress tasks.
function repoAccess(tasks: Tasks): RepoAccess {
  return {
    nodeOf: (p) => p.nodeId ?? null,
    mayFetch: (p) => holdsScope(p, 'node:heartbeat'),
    heldSessions: (node) => new Set(tasks.list({ status: ['claimed', 'in_progress'] })
      .filter((t) => t.node_id === node && t.claimed_by_session !== null).map((t) => t.claimed_by_session!)),
  };
}
