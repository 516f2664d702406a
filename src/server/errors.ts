// The one table from domain error codes to HTTP statuses; the body is {detail, code, ...data}.
import { DomainError } from '../lib/domain-error.ts';

/** HTTP status of each domain error code. A code missing here is a bug: it answers 500 and is logged. */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  task_not_found: 404,
  no_open_task: 404,
  transition_refused: 409,
  version_conflict: 409,
  claim_blocked: 409,
  task_reassigned: 409,
  draining: 503,
};

/** The response of a domain error, or undefined when its code has no status. */
export function domainResponse(err: DomainError): { status: number; body: Record<string, unknown> } | undefined {
  const status = STATUS_OF_CODE[err.code];
  return status === undefined ? undefined : { status, body: { ...err.data, detail: err.detail, code: err.code } };
}
