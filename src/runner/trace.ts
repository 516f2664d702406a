// W3C Trace Context for agent runs: an agent CLI that exports OpenTelemetry joins the run's trace.

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The trace id of a valid version-00 `traceparent`, else null (pure). */
export function traceIdOf(traceparent: unknown): string | null {
  if (typeof traceparent !== 'string') return null;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return null;
  return m[1]!;
}

/**
 * The `TRACEPARENT` of one agent run (pure): the trace of the task when its creator gave one
 * (`metadata.traceparent`), else a new trace; the parent span is the run's own (24 random bytes: 16 for
 * a new trace id, 8 for the span id). Sampled, so the agent's spans are recorded.
 */
export function runTraceparent(taskTraceparent: unknown, random: Uint8Array): { traceparent: string; traceId: string } {
  if (random.length < 24) throw new Error('runTraceparent needs 24 random bytes');
  const hex = Buffer.from(random).toString('hex');
  const traceId = traceIdOf(taskTraceparent) ?? (hex.slice(0, 32) === ZERO_TRACE ? `${hex.slice(0, 31)}1` : hex.slice(0, 32));
  const span = hex.slice(32, 48) === ZERO_SPAN ? `${hex.slice(32, 47)}1` : hex.slice(32, 48);
  return { traceparent: `00-${traceId}-${span}-01`, traceId };
}
