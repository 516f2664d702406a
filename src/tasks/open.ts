// The tasks domain of a running server, assembled: the board loaded from disk, its interface and its routes.
import type { Route } from '../lib/route.ts';
import { removeSnapshot } from '../store/snapshot.ts';
import type { Tasks } from './api.ts';
import { backfillRiskRecords, type BackfillGates } from './create.ts';
import { drainRoutes } from './routes-drain.ts';
import { taskReadRoutes } from './routes-read.ts';
import { taskWriteRoutes } from './routes-write.ts';
import { TaskService, type NodeHooks, type TaskDeps } from './service.ts';
import type { BoardSnapshot } from './snapshot.ts';

export interface TasksDomain {
  tasks: Tasks;
  routes: { read: Route[]; write: Route[]; drain: Route[] };
  /** Tasks on the board once loaded at start, and how many of them came from the last stop's snapshot. */
  loaded: number;
  fromSnapshot: number;
  /** Write the board's snapshot for the next start (at a stop, once nothing changes the board); how many tasks. */
  saveSnapshot(file: string): Promise<number>;
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
 * are read again once the board is loaded. With `snapshot` the board comes from the last stop's snapshot
 * where the files still match it (tasks/snapshot.ts); the snapshot is removed once loaded.
 */
export async function openTasks(deps: TaskDeps, restored: Promise<readonly string[]> = Promise.resolve([]), snapshot?: BoardSnapshot): Promise<TasksDomain> {
  const svc = new TaskService(deps);
  const { fromSnapshot } = await svc.load(snapshot);
  // From here on the files change: a snapshot left behind (by a crash) would only cost the next start a read.
  if (snapshot) removeSnapshot(snapshot.file);
  await svc.reload(await restored);
  const loaded = svc.size;
  return {
    tasks: svc, installNodeHooks: (hooks) => { svc.nodes = hooks; }, routes: { read: taskReadRoutes(svc), write: taskWriteRoutes(svc), drain: drainRoutes(svc) },
    loaded, fromSnapshot, saveSnapshot: (file) => svc.saveSnapshot(file), backfill: (gates) => backfillRiskRecords(svc, gates),
  };
}
