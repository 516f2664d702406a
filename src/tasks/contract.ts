import { TypeCompiler } from '../lib/typebox.ts';
import { CompletionPayload } from './schema.ts';

/** What a completion body amounts to under the worker completion contract (DECISIONS.md). */
export type CompletionVerdict =
  | { kind: 'prose' }
  | { kind: 'completed'; payload: CompletionPayload }
  | { kind: 'refused'; payload: CompletionPayload }
  | { kind: 'empty' }
  | { kind: 'violation'; path: string; reason: string };

// Compiled lazily on first use, so importing this module does no work.
let checker: ReturnType<typeof TypeCompiler.Compile<typeof CompletionPayload>> | undefined;
const compiled = () => (checker ??= TypeCompiler.Compile(CompletionPayload));

/** Classify a complete request: empty summary, prose, or a structured payload that completes, refuses or violates. */
export function classifyCompletion(body: { result_summary: string; payload?: unknown }): CompletionVerdict {
  const summary = body.result_summary.trim();
  if (summary === '') return { kind: 'empty' };
  const structured = body.payload !== undefined ? body.payload : embeddedObject(summary);
  if (structured === undefined) return { kind: 'prose' };
  const violation = firstViolation(structured);
  if (violation) return { kind: 'violation', ...violation };
  const payload = structured as CompletionPayload;
  return payload.outcome === 'refused' ? { kind: 'refused', payload } : { kind: 'completed', payload };
}

// The JSON object a summary consists of, when the whole trimmed text parses as one; else undefined (prose).
function embeddedObject(summary: string): unknown {
  if (!summary.startsWith('{') || !summary.endsWith('}')) return undefined;
  try {
    const value: unknown = JSON.parse(summary);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The first contract error as {path (JSON pointer), reason}, or null when the payload is valid. */
export function firstViolation(value: unknown): { path: string; reason: string } | null {
  const first = compiled().Errors(value).First();
  if (first) return { path: first.path, reason: first.message };
  const p = value as CompletionPayload;
  // The schema cannot say "refusal.reason required only when refused"; this rule does.
  if (p.outcome === 'refused' && p.refusal?.reason === undefined) {
    return { path: '/refusal/reason', reason: 'Expected required property' };
  }
  return null;
}
