// The shapes observe reads from other domains (types only: importing observe loads no task or agent code).
export type { GateReport, Task, Actor } from '../tasks/index.ts';
export type { MergeOutcome, RunRecord, SessionRecord } from '../agents/index.ts';
export type { AgentObserver } from '../agents/index.ts';
