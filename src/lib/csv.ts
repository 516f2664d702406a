// CSV cells and rows (RFC 4180: CRLF rows, quotes doubled), shared by the compliance and board exports.

// A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
const FORMULA = /^[=+\-@\t\r]/;

/**
 * One cell: null and undefined empty, arrays joined with `;`, quoted when it holds a comma, quote or line
 * break. With `neutralise`, a text cell a spreadsheet would run as a formula is prefixed with `'`.
 */
export function csvCell(v: unknown, neutralise = false): string {
  let s = v === null || v === undefined ? '' : Array.isArray(v) ? v.join(';') : String(v);
  if (neutralise && typeof v === 'string' && FORMULA.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One row with its CRLF. */
export function csvRow(values: readonly unknown[], neutralise = false): string {
  return `${values.map((v) => csvCell(v, neutralise)).join(',')}\r\n`;
}
