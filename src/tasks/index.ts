// The domain's door: `Tasks` (api.ts) for other domains, openTasks for the server (the board, its routes). The
// service, the board and their deps stay inside src/tasks: nothing here hands them out.
export type { Tasks, TaskFilter, ClaimOptions, Completion, Reservation } from './api.ts';
export { openTasks, type TasksDomain } from './open.ts';
export type { TaskDeps, Actor, ApplyOptions, PatchFields, NodeHooks } from './service.ts';
export * from './schema.ts';
export { isTerminal, isActive, runId, TERMINAL, ACTIVE, WORKING, type TaskOp } from './machine.ts';
export { byCreation } from './query.ts';
export { TransitionRefused, TaskNotFound, VersionConflict, ClaimBlocked, TaskReassigned, NoOpenTask, Draining, TASK_REFUSALS } from './errors.ts';
