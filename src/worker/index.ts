export { workerOptions, WORKER_DEFAULTS, type WorkerFlags, type WorkerOptions } from './options.ts';
export { runWorker, WorkerError, type WorkerDeps } from './worker.ts';
export { outcomeOf, Outbox, type Outcome, type Report } from './outbox.ts';
export { claimingRecord, endReport, SessionFiles, type WorkerSession } from './sessions.ts';
export { afterHeartbeat, killsOf, stateHeadOf, versionProblem, registration } from './node.ts';
export { claimingFate, rotate, waitSeconds, type ClaimingFate } from './claims.ts';
export { nextOf, type NextClaim } from './reports.ts';
export { serverClient, type Answer, type ServerClient } from './client.ts';
export { startRelay } from './relay.ts';
