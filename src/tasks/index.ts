// The domain's door: `Tasks` (api.ts) for other domains, openTasks for the server. TaskService stays exported for
// tests and tools that build a board by hand.
export type { Tasks, TaskFilter, ClaimOptions, Reservation } from './api.ts';
export { openTasks, type TasksDomain } from './open.ts';
export { TaskService, type TaskDeps, type Actor, type ApplyOptions, type PatchFields, type NodeHooks } from './service.ts';
export { createTask, createBatch, selfCreate, backfillRiskRecords } from './create.ts';
export { claimNext, claimOne, claimBatch } from './claims.ts';
export { completeTask, finish, cancelTask } from './lifecycle.ts';
export { reportProgress, readProgress, readSnapshots, isStalled } from './progress.ts';
export { taskWriteRoutes, actorOf } from './routes-write.ts';
export { taskReadRoutes } from './routes-read.ts';
export { drainRoutes } from './routes-drain.ts';
export * from './schema.ts';
export { isTerminal, isActive, runId, TERMINAL, ACTIVE, WORKING, type TaskOp } from './machine.ts';
export { Board } from './board.ts';
export { TransitionRefused, TaskNotFound, VersionConflict, ClaimBlocked, TaskReassigned, NoOpenTask, Draining, TASK_REFUSALS } from './errors.ts';
