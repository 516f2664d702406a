import { spawn } from 'node:child_process';
import type { GateConfig } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import { killGroup } from '../runner/index.ts';

/** One gate's outcome. `output_tail` is the last bytes of its combined stdout and stderr. */
export interface GateResult {
  name: string;
  command: string;
  required: boolean;
  status: 'pass' | 'fail' | 'timeout' | 'error';
  exit_code: number | null;
  duration_ms: number;
  output_tail: string;
}

/** The report of one gate run (the caller stores it at `.sdd/gates/<xx>/<task_id>.json`). */
export interface GateReport {
  task_id: string;
  session_id: string;
  overall_pass: boolean;
  failed_required: string[];
  started_at: string;
  finished_at: string;
  duration_ms: number;
  results: GateResult[];
}

/** How gates run: where, with which environment, and how much output to keep. */
export interface GateRunOptions {
  cwd: string;
  /** The gate's environment; omitted = this process's own. */
  env?: Record<string, string>;
  tailBytes?: number;
  /** Between SIGTERM and SIGKILL of a timed-out gate's process group. */
  killGraceMs?: number;
  /** Turns the gate's argv into the one to start (the session's sandbox); default as is. */
  wrap?: (argv: readonly string[]) => string[];
}

const DEFAULT_TAIL = 8 * 1024;

/** Pass when every required gate passed; optional failures are reported but never block (pure). */
export function summarizeGates(results: readonly GateResult[]): { overall_pass: boolean; failed_required: string[] } {
  const failed_required = results.filter((r) => r.required && r.status !== 'pass').map((r) => r.name);
  return { overall_pass: failed_required.length === 0, failed_required };
}

/** Run every gate in order in the worktree and report; all run even after a failure, so the report is whole. */
export async function runGates(deps: { clock: Clock }, input: { gates: readonly GateConfig[]; taskId: string; sessionId: string } & GateRunOptions): Promise<GateReport> {
  const started = deps.clock.now();
  const started_at = deps.clock.iso();
  const results: GateResult[] = [];
  for (const gate of input.gates) results.push(await runGate(gate, input));
  return {
    task_id: input.taskId,
    session_id: input.sessionId,
    ...summarizeGates(results),
    started_at,
    finished_at: deps.clock.iso(),
    duration_ms: Math.max(0, deps.clock.now() - started),
    results,
  };
}

/** Run one gate with `/bin/sh -c` as its own process group; on timeout the whole group is killed. */
export function runGate(gate: GateConfig, opts: GateRunOptions): Promise<GateResult> {
  const t0 = performance.now();
  const tail = tailBuffer(opts.tailBytes ?? DEFAULT_TAIL);
  const base = { name: gate.name, command: gate.command, required: gate.required };
  return new Promise((resolve) => {
    const [bin = '/bin/sh', ...args] = opts.wrap ? opts.wrap(['/bin/sh', '-c', gate.command]) : ['/bin/sh', '-c', gate.command];
    const child = spawn(bin, args, { cwd: opts.cwd, ...(opts.env ? { env: opts.env } : {}), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let killing: Promise<unknown> | null = null;
    let settled = false;
    const finish = (status: GateResult['status'], code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...base, status, exit_code: code, duration_ms: Math.round(performance.now() - t0), output_tail: tail.text() });
    };
    const timer = setTimeout(() => {
      tail.push(Buffer.from(`\n[svc] gate '${gate.name}' timed out after ${gate.timeout_s} s; killing its process group\n`));
      if (child.pid) killing = killGroup(child.pid, { graceMs: opts.killGraceMs ?? 2_000 });
    }, gate.timeout_s * 1000);
    child.stdout.on('data', (d: Buffer) => tail.push(d));
    child.stderr.on('data', (d: Buffer) => tail.push(d));
    child.once('error', (err) => {
      tail.push(Buffer.from(`[svc] could not start gate: ${err.message}\n`));
      finish('error', null);
    });
    child.once('exit', (code) => {
      // Report a timeout only once the whole group is gone; a grandchild outside the group may hold the pipes, so wait briefly.
      const done = () => void Promise.resolve(killing).then(() => finish(killing ? 'timeout' : code === 0 ? 'pass' : 'fail', code));
      const grace = setTimeout(done, 500);
      child.once('close', () => {
        clearTimeout(grace);
        done();
      });
    });
  });
}

// Keeps only the last `max` bytes seen; cut at a character boundary when shown.
function tailBuffer(max: number) {
  let chunks: Buffer[] = [];
  let size = 0;
  return {
    push(b: Buffer) {
      chunks.push(b);
      size += b.length;
      while (size - (chunks[0]?.length ?? 0) >= max && chunks.length > 1) size -= chunks.shift()!.length;
    },
    text(): string {
      const all = Buffer.concat(chunks);
      chunks = [all];
      return all.subarray(Math.max(0, all.length - max)).toString('utf8').replace(/^\uFFFD+/, '');
    },
  };
}
