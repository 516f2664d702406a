import { createConsola, LogLevels, type ConsolaInstance, type LogObject } from 'consola';

/** The logger every module receives through its deps (consola, one tag per area). */
export type Logger = Pick<ConsolaInstance, 'info' | 'warn' | 'error' | 'debug' | 'success' | 'start' | 'withTag'>;

// One JSON object per line; consola serialises Error as {} so map it by hand.
function jsonReporter(out: NodeJS.WritableStream) {
  return {
    log(o: LogObject) {
      const data = o.args.slice(1).map((a) => (a instanceof Error ? { message: a.message, stack: a.stack } : a));
      const msg = o.args[0] instanceof Error ? (o.args[0] as Error).message : o.args[0];
      out.write(JSON.stringify({ ts: o.date.toISOString(), level: o.type, tag: o.tag || undefined, msg, data: data.length ? data : undefined }) + '\n');
    },
  };
}

/** Human output by default, `json: true` for one JSON object per line; never throttled. */
export function createLogger(opts: { json?: boolean; level?: number; stream?: NodeJS.WritableStream } = {}): Logger {
  const level = opts.level ?? (process.env.SVC_LOG_LEVEL ? Number(process.env.SVC_LOG_LEVEL) : LogLevels.info);
  if (opts.json) return createConsola({ level, throttle: 0, reporters: [jsonReporter(opts.stream ?? process.stderr)] });
  const stream = opts.stream as NodeJS.WriteStream | undefined;
  return createConsola({ level, throttle: 0, ...(stream ? { stdout: stream, stderr: stream } : {}) });
}

/** A logger that drops everything; for tests and benchmarks. */
export function silentLogger(): Logger {
  return createConsola({ level: -999, throttle: 0, reporters: [] });
}
