/**
 * `text` as one line for a commit message subject or a log line (pure): control characters (newlines
 * included) are escaped as `\n`, `\t`, `\xNN`, so a title can never forge a trailer such as
 * `Signed-off-by:` on a line of its own; cut at `max` characters with `…`.
 */
export function oneLine(text: string, max = 200): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  // C0, DEL, C1 and the Unicode line and paragraph separators.
  const escaped = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}
