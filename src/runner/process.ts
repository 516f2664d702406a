import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isValidId } from '../store/ids.ts';
import type { SddLayout } from '../store/layout.ts';

/** How an agent process ended: its exit code, or the signal that killed it. */
export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started agent: the pid (also its process-group id) and a promise of its end (this server's children only). */
export interface AgentProcess {
  pid: number;
  exited: Promise<AgentExit>;
}

/** What to start and where its output goes. */
export interface SpawnAgentOptions {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** stdout and stderr are appended here (opened in append mode, created with its folder). */
  logFile: string;
  /** When set, the agent's exit code is written here, so a restarted server can still learn it. */
  exitFile?: string;
}

// `sh -c WRAPPER svc-agent <exitFile> <argv…>`: runs argv unchanged ("$@", no re-splitting), then records its code.
const WRAPPER = 'f=$1; shift; "$@"; c=$?; printf "%s\\n" "$c" > "$f.tmp" && mv -f "$f.tmp" "$f"; exit "$c"';

/** Start an agent as the leader of its own process group, output appended to its log; it survives our exit and never keeps us alive (unref'd). */
export function spawnAgent(opts: SpawnAgentOptions): Promise<AgentProcess> {
  const [bin, ...args] = opts.argv;
  if (!bin) return Promise.reject(new Error('spawnAgent: empty argv'));
  mkdirSync(dirname(opts.logFile), { recursive: true, mode: 0o700 });
  if (opts.exitFile) mkdirSync(dirname(opts.exitFile), { recursive: true, mode: 0o700 });
  const fd = openSync(opts.logFile, 'a', 0o600);
  try {
    // A file descriptor, not a pipe: the agent keeps writing its log after this server stops.
    const child = opts.exitFile
      ? spawn('/bin/sh', ['-c', WRAPPER, 'svc-agent', opts.exitFile, bin, ...args], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', fd, fd] })
      : spawn(bin, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', fd, fd] });
    const exited = new Promise<AgentExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    return new Promise<AgentProcess>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve({ pid: child.pid!, exited });
      });
    });
  } finally {
    closeSync(fd);
  }
}

/** Where an agent's exit code is recorded: `.sdd/runtime/agents/<sid>.exit`. */
export function exitFilePath(layout: SddLayout, sid: string): string {
  if (!isValidId(sid)) throw new Error(`invalid session id for a path: ${JSON.stringify(sid).slice(0, 80)}`);
  return join(layout.agentsDir, `${sid}.exit`);
}

/** The exit code an agent's wrapper recorded, or null (still running, or killed before it could write). */
export async function readExitCode(exitFile: string): Promise<number | null> {
  try {
    const n = Number((await readFile(exitFile, 'utf8')).trim());
    return Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

interface ProcStat {
  state: string;
  pgrp: number;
  startTicks: number;
}

// /proc/<pid>/stat: the command name may hold spaces and parentheses, so parse after the last ')'.
function procStat(pid: number): ProcStat | null | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' && hasProc() ? null : undefined;
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0] ?? '', pgrp: Number(f[2]), startTicks: Number(f[19]) };
}

function hasProc(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}

// Linux reports start times in clock ticks since boot; USER_HZ is 100 on every mainstream kernel.
function procStartMs(startTicks: number): number | null {
  const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
  return m ? Number(m[1]) * 1000 + startTicks * 10 : null;
}

/** True while `pid` runs (zombies count as gone); with `startedAtMs`, a reused pid of a newer process is not ours. */
export function isAlive(pid: number, startedAtMs?: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const st = procStat(pid);
  if (st === null) return false;
  if (st === undefined) return true;
  if (st.state === 'Z' || st.state === 'X') return false;
  const start = startedAtMs === undefined ? null : procStartMs(st.startTicks);
  // The record is written just after spawn; a process that started well after it reused the pid.
  return start === null || start <= startedAtMs! + 5_000;
}

/** True while any live (non-zombie) process belongs to process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (!hasProc()) return true;
  // Orphaned zombies linger where nothing reaps them (some container inits); they are not running.
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X') return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait until `check()` is false, polling; true when it became false before `timeoutMs`. */
async function waitUntilGone(check: () => boolean, timeoutMs: number, pollMs: number): Promise<boolean> {
  // Monotonic elapsed time for a timeout, not a timestamp: no injected clock needed.
  const deadline = performance.now() + timeoutMs;
  while (check()) {
    if (performance.now() >= deadline) return false;
    await sleep(pollMs);
  }
  return true;
}

/** How a kill ended: the group was already gone, left on SIGTERM, or needed SIGKILL. */
export type KillOutcome = 'absent' | 'terminated' | 'killed';

/** Signal the whole process group `pgid` (SIGTERM), then SIGKILL what is left after `graceMs`. */
export async function killGroup(pgid: number, opts: { signal?: NodeJS.Signals; graceMs?: number; pollMs?: number } = {}): Promise<KillOutcome> {
  const pollMs = opts.pollMs ?? 50;
  if (!groupAlive(pgid)) return 'absent';
  signalGroup(pgid, opts.signal ?? 'SIGTERM');
  if (await waitUntilGone(() => groupAlive(pgid), opts.graceMs ?? 5_000, pollMs)) return 'terminated';
  signalGroup(pgid, 'SIGKILL');
  await waitUntilGone(() => groupAlive(pgid), 5_000, pollMs);
  return 'killed';
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Wait for a process that may not be our child (e.g. started before a restart); true when it exited in time. */
export function waitForExit(pid: number, opts: { timeoutMs?: number; pollMs?: number; startedAtMs?: number } = {}): Promise<boolean> {
  return waitUntilGone(() => isAlive(pid, opts.startedAtMs), opts.timeoutMs ?? Number.POSITIVE_INFINITY, opts.pollMs ?? 200);
}
