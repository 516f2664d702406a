export { GENESIS_PREV, SEGMENT_PATTERN, auditHmac, createAuditLog, listSegments, nextRecord, scanTail } from './audit.ts';
export { AuditKeyError, loadAuditKey } from './audit-key.ts';
export type { AuditDeps, AuditEntry, AuditLog, AuditRecord, AuditTail } from './audit.ts';
export { finishWalk, formatAuditBreak, startWalk, verifyAudit, walkSegment } from './audit-verify.ts';
export type { AuditBreak, AuditBreakReason, AuditSegment, AuditVerifyResult, AuditWarning, ChainWalk } from './audit-verify.ts';
export { acquireAuditWriter, appendAuditFromCli, drainAuditInbox } from './audit-writer.ts';
export { reconcileAudit } from './audit-reconcile.ts';
export { formatRewrite, segmentsAtTip, segmentVersions, SegmentHistory, verifyAuditHistory } from './audit-history.ts';
export type { AuditHistoryResult, AuditRewrite } from './audit-history.ts';
