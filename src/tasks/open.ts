// The tasks domain of a running server, assembled: the board loaded from disk, its interface and its routes.
import type { Route } from '../lib/route.ts';
import type { Tasks } from './api.ts';
import { backfillRiskRecords, type BackfillGates } from './create.ts';
import { drainRoutes } from './routes-drain.ts';
import { taskReadRoutes } from './routes-read.ts';
import { taskWriteRoutes } from './routes-write.ts';
import { TaskService, type NodeHooks, type TaskDeps } from './service.ts';

export interface TasksDomain {
  tasks: Tasks;
  routes: { read: Route[]; write: Route[]; drain: Route[] };
  /** Tasks on the board once loaded at start. */
  loaded: number;
  /** Let the cluster refuse claims of cordoned or draining nodes and count fenced writes. */
  installNodeHooks(hooks: NodeHooks): void;
  /**
   * Write the EU AI Act record of every task that has none (created before they existed, or a crash between
   * the two); how many. A write: the server calls it once its start may write `.sdd`.
   */
  backfill(gates?: BackfillGates): Promise<number>;
}

/**
 * Load the board (under the server lock; it only reads) and build the domain's routes. `restored` gives the
 * task files a restore wrote while the board loaded (a fresh clone, files deleted by hand): their folders
 * are read again once the board is loaded.
 */
export async function openTasks(deps: TaskDeps, restored: Promise<readonly string[]> = Promise.resolve([])): Promise<TasksDomain> {
  const svc = new TaskService(deps);
  await svc.load();
  await svc.reload(await restored);
  const loaded = svc.size;
  return {
    tasks: svc, installNodeHooks: (hooks) => { svc.nodes = hooks; }, routes: { read: taskReadRoutes(svc), write: taskWriteRoutes(svc), drain: drainRoutes(svc) },
    loaded, backfill: (gates) => backfillRiskRecords(svc, gates),
  };
}
