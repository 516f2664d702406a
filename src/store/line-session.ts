// A long-lived helper process spoken to on stdin and answered in lines on stdout, one request at a time:
// what a spawn per request would cost the server (a fork of a process of a few hundred MiB, ~10-30 ms of
// its event loop here) is paid once. The syncfs helper, `git fast-import` and `git update-ref --stdin`.
import { spawn, type ChildProcess } from 'node:child_process';
import { once as eventOnce } from 'node:events';
import type { Writable } from 'node:stream';
import { nextTurn } from '../lib/timers.ts';

/** The process ended (or could not start) while a request waited; `stderr` is its last words. */
export class SessionEnded extends Error {
  constructor(readonly command: string, readonly stderr: string, readonly code: number | null) {
    super(`${command} ended${code === null ? '' : ` (exit ${code})`}${stderr ? `: ${stderr.trim().slice(-500)}` : ''}`);
    this.name = 'SessionEnded';
  }
}

export interface LineSession {
  /** Send `input` and resolve with the next `lines` lines of its stdout; SessionEnded when it dies first. */
  ask(input: string | AsyncIterable<Uint8Array>, lines: number): Promise<string[]>;
  /** End its stdin (with `last` written first) and wait for it to exit. */
  close(last?: string): Promise<void>;
  /** True while a process runs. */
  readonly running: boolean;
}

export interface LineSessionOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written once after each start, before the first request. */
  preamble?: string;
}

/** A session of `command args`, started on the first request and again after it ended. */
export function lineSession(command: string, args: string[], o: LineSessionOptions = {}): LineSession {
  let child: ChildProcess | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let out = '';
  let err = '';
  let want: { lines: number; got: string[]; resolve(l: string[]): void; reject(e: Error): void } | undefined;

  // Keep the process from holding a stopping server only while nobody waits for it.
  const hold = (c: ChildProcess, on: boolean) => {
    const s = [c, c.stdin, c.stdout, c.stderr] as unknown as ({ ref(): void; unref(): void } | null)[];
    for (const x of s) if (x) { if (on) x.ref(); else x.unref(); }
  };
  const take = () => {
    for (let nl = out.indexOf('\n'); want && nl >= 0; nl = out.indexOf('\n')) {
      want.got.push(out.slice(0, nl));
      out = out.slice(nl + 1);
      if (want.got.length === want.lines) { const w = want; want = undefined; w.resolve(w.got); }
    }
  };
  const start = (): ChildProcess => {
    const c = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    out = '';
    err = '';
    c.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; take(); });
    c.stderr!.setEncoding('utf8').on('data', (d: string) => { err = (err + d).slice(-4000); });
    c.stdin!.on('error', () => undefined); // a process that died: its exit answers the request
    const ended = (code: number | null) => {
      if (child === c) child = undefined;
      const w = want;
      want = undefined;
      w?.reject(new SessionEnded(`${command} ${args.filter((a) => !a.includes('=')).slice(-2).join(' ')}`, err, code));
    };
    c.on('error', (e) => { err += e.message; ended(null); });
    c.on('close', (code) => ended(code));
    if (o.preamble) c.stdin!.write(o.preamble);
    hold(c, false);
    return c;
  };
  const once = (input: string | AsyncIterable<Uint8Array>, lines: number) => new Promise<string[]>((resolve, reject) => {
    const c = (child ??= start());
    want = { lines, got: [], resolve: (l) => { hold(c, false); resolve(l); }, reject: (e) => { hold(c, false); reject(e); } };
    hold(c, true);
    if (typeof input === 'string') c.stdin!.write(input);
    else feed(input, c.stdin!).catch((e: Error) => { c.kill('SIGKILL'); err += e.message; });
    take();
  });
  return {
    ask(input, lines) {
      const p = queue.then(() => once(input, lines));
      queue = p.catch(() => undefined);
      return p;
    },
    async close(last) {
      await queue;
      const c = child;
      child = undefined;
      if (!c) return;
      hold(c, true);
      const exited = new Promise<void>((r) => c.once('close', () => r()));
      c.stdin!.end(last);
      await exited;
    },
    get running() { return child !== undefined; },
  };
}

// Write a stream of chunks to a stdin that stays open (no pipeline: its listeners would pile up per request).
// A turn of the event loop between chunks even when the pipe takes them at once: a state commit of a thousand
// records is ~70 ms of rendering and reading, which in one piece held every request behind it (p99 at W = 32).
async function feed(input: AsyncIterable<Uint8Array>, to: Writable): Promise<void> {
  for await (const chunk of input) {
    if (to.destroyed) throw new Error('the process closed its input');
    if (!to.write(chunk)) await eventOnce(to, 'drain');
    else await nextTurn();
  }
}
