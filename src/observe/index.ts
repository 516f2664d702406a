export { GENESIS_PREV, SEGMENT_PATTERN, auditHmac, listSegments, nextRecord, openAuditChain, scanTail } from './audit.ts';
export type { AuditChain, AuditEntry, AuditRecord, AuditTail, ChainMark } from './audit.ts';
export { createAuditLog, type AuditDeps, type AuditLog } from './audit-log.ts';
export { AuditKeyError, loadAuditKey } from './audit-key.ts';
export { finishWalk, formatAuditBreak, startWalk, verifyAudit, walkSegment } from './audit-verify.ts';
export type { AuditBreak, AuditBreakReason, AuditVerifyResult, AuditWarning, ChainWalk } from './audit-verify.ts';
export { acquireAuditWriter, appendAuditFromCli, drainAuditInbox } from './audit-writer.ts';
