// `svc worker` children for tests: each in its own clone of the server's /repo.git, the fake agent as its adapter.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT, svcArgv } from './server.ts';

export const FAKE_AGENT = join(PROJECT, 'fixtures', 'fake-agent.mjs');

export interface RunningWorker {
  dir: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `git clone {server}/repo.git dir` with `token`, and a config.yaml naming the fake agent. */
export function cloneForWorker(server: string, token: string, dir: string): void {
  execFileSync('git', ['-c', `http.extraHeader=Authorization: Bearer ${token}`, '-c', 'credential.helper=', 'clone', '-q', `${server}/repo.git`, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  mkdirSync(join(dir, '.sdd'), { recursive: true });
  writeFileSync(join(dir, '.sdd', 'config.yaml'), ['agents:', '  default: generic', '  sandbox: none', '  generic:', `    command: "node ${FAKE_AGENT} --prompt-file {prompt_file}"`, ''].join('\n'));
}

/** Start `svc worker` in `dir` with these flags (server and token included by the caller). */
export function startWorker(dir: string, args: string[], env: Record<string, string> = {}): RunningWorker {
  const child = spawn(process.execPath, svcArgv('worker', ...args), { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { dir, child, output: () => out, exited, stop: (signal = 'SIGTERM') => { child.kill(signal); return exited; } };
}
