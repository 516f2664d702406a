/** Media types a browser sends CSP violation reports with. */
export const CSP_TYPES = ['application/csp-report', 'application/reports+json', 'application/json'] as const;

/** Body cap of a CSP report (declared or actual); larger reports are dropped unread. */
export const CSP_BODY_LIMIT = 32 * 1024;

/** Most violations logged from one request (a reports+json array may batch many). */
const MAX_PER_REQUEST = 20;
const FIELD_MAX = 300;

/** One violation, normalised from either report format; every field at most 300 characters. */
export interface Violation {
  directive: string;
  blocked: string;
  document: string;
  disposition: string;
  sourceFile: string;
  line: number | null;
  sample: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '').slice(0, FIELD_MAX);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// The legacy report-uri body: {"csp-report": {kebab-case fields}}.
function fromLegacy(r: Record<string, unknown>): Violation {
  return {
    directive: str(r['effective-directive'] ?? r['violated-directive']), blocked: str(r['blocked-uri']),
    document: str(r['document-uri']), disposition: str(r.disposition), sourceFile: str(r['source-file']),
    line: num(r['line-number']), sample: str(r['script-sample']),
  };
}

// A Reporting API body: {type: "csp-violation", body: {camelCase fields}}.
function fromReporting(b: Record<string, unknown>): Violation {
  return {
    directive: str(b.effectiveDirective ?? b.violatedDirective), blocked: str(b.blockedURL ?? b.blockedURI),
    document: str(b.documentURL ?? b.documentURI), disposition: str(b.disposition), sourceFile: str(b.sourceFile),
    line: num(b.lineNumber), sample: str(b.sample),
  };
}

/** The violations in a parsed report body, whatever its format; anything unrecognised yields none. */
export function violationsOf(parsed: unknown): Violation[] {
  if (isObj(parsed) && isObj(parsed['csp-report'])) return [fromLegacy(parsed['csp-report'])];
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return list
    .filter((r): r is Record<string, unknown> => isObj(r) && r.type === 'csp-violation' && isObj(r.body))
    .slice(0, MAX_PER_REQUEST)
    .map((r) => fromReporting(r.body as Record<string, unknown>));
}

/** Parse a report body: violations, or [] for bad JSON or an unknown shape (the route answers 204 anyway). */
export function parseCspReport(buf: Buffer): Violation[] {
  try {
    return violationsOf(JSON.parse(buf.toString('utf8')));
  } catch {
    return [];
  }
}
