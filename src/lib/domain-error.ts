// A refusal a domain decides, as data: a stable code, the words for people, facts for programs. Domains
// never name an HTTP status; the server maps codes to statuses in one table (server/errors.ts).

/** A domain's refusal: `code` is what callers branch on, `detail` what people read, `data` the facts. */
export class DomainError<C extends string = string, D extends object = Record<string, unknown>> extends Error {
  constructor(readonly code: C, readonly detail: string, readonly data: D) {
    super(detail);
    this.name = 'DomainError';
  }
}

/** True when `err` is a DomainError with one of `codes`. */
export function hasCode(err: unknown, ...codes: readonly string[]): err is DomainError {
  return err instanceof DomainError && codes.includes(err.code);
}
