// Per-source poll watermarks in `.sdd/runtime/poll_watermarks.jsonl`: read at start, appended when they move.
import { readFile } from 'node:fs/promises';
import type { Logger } from '../lib/log.ts';
import { createAppenders, parseJsonl } from '../store/index.ts';
import { foldWatermarks, type WatermarkLine } from './poll-plan.ts';

/** The newest ticket time each source's last complete poll saw. */
export interface Watermarks {
  /** Epoch ms; 0 when the source never completed a poll. */
  get(source: string): number;
  /** Move a source's watermark forward (never back); appends a line only when it moves. */
  advance(source: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Open the watermark file (absent or unreadable: every source starts at 0). */
export async function openWatermarks(path: string, log: Logger): Promise<Watermarks> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') log.warn(`poll watermarks ${path} unreadable, starting from 0: ${err.message}`);
    return '';
  });
  const marks = foldWatermarks(parseJsonl<unknown>(text));
  const appender = createAppenders();
  return {
    get: (source) => marks.get(source) ?? 0,
    async advance(source, ms) {
      if (!(ms > (marks.get(source) ?? 0))) return;
      marks.set(source, ms);
      const line: WatermarkLine & { updated_at: string } = { source, ts: ms / 1000, updated_at: new Date(ms).toISOString() };
      await appender.append(path, JSON.stringify(line)).catch((err: Error) => log.warn(`poll watermark of ${source} not written: ${err.message}`));
    },
    close: () => appender.close(),
  };
}
