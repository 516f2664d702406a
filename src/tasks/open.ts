// The tasks domain of a running server, assembled: the board loaded from disk, its interface and its routes.
import type { Route } from '../lib/route.ts';
import type { Tasks } from './api.ts';
import { backfillRiskRecords } from './create.ts';
import { drainRoutes } from './routes-drain.ts';
import { taskReadRoutes } from './routes-read.ts';
import { taskWriteRoutes } from './routes-write.ts';
import { TaskService, type NodeHooks, type TaskDeps } from './service.ts';

export interface TasksDomain {
  tasks: Tasks;
  routes: { read: Route[]; write: Route[]; drain: Route[] };
  /** Task files loaded at start. */
  loaded: number;
  /** Let the cluster refuse claims of cordoned or draining nodes and count fenced writes. */
  installNodeHooks(hooks: NodeHooks): void;
  /** EU AI Act records written for tasks that had none (created before they existed, or a crash between the two). */
  backfilled: number;
}

/** Load the board (under the server lock) and build the domain's routes. */
export async function openTasks(deps: TaskDeps): Promise<TasksDomain> {
  const svc = new TaskService(deps);
  const loaded = await svc.load();
  const backfilled = await backfillRiskRecords(svc);
  return { tasks: svc, installNodeHooks: (hooks) => { svc.nodes = hooks; }, routes: { read: taskReadRoutes(svc), write: taskWriteRoutes(svc), drain: drainRoutes(svc) }, loaded, backfilled };
}
