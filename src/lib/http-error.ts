// Errors are data: a status, a detail string, and optional extra members for the JSON body.
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
  /** The JSON body: {"detail": …} plus any extra members. */
  body(): Record<string, unknown> {
    return { detail: this.detail, ...this.extra };
  }
}

export const badRequest = (detail: string) => new HttpError(400, detail);
export const unauthorized = (detail = 'Missing or invalid Authorization header') => new HttpError(401, detail);
export const forbidden = (detail: string) => new HttpError(403, detail);
export const notFound = (detail: string) => new HttpError(404, detail);
export const conflict = (detail: string, extra: Record<string, unknown> = {}) => new HttpError(409, detail, extra);
export const unprocessable = (detail: string, extra: Record<string, unknown> = {}) => new HttpError(422, detail, extra);
export const tooMany = (detail: string, retryAfterS: number) =>
  new HttpError(429, detail, {}, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterS))) });
export const unavailable = (detail: string) => new HttpError(503, detail);
