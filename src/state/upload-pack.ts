// Git smart HTTP, read-only: `git upload-pack --stateless-rpc` over the state mirror, streamed both ways.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { HttpError } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { gitBaseEnv, hardenedArgs } from '../store/index.ts';

/** How one upload-pack run is started. */
export interface UploadPackOptions {
  gitdir: string;
  log: Logger;
  /** Largest request body, after gunzip (the wants and haves of a negotiation). */
  maxRequestBytes?: number;
  /** The child is killed after this long (a stuck client must not hold a process forever). */
  timeoutMs?: number;
}

/** `Git-Protocol: version=2` asks for protocol v2; anything else is v0. Only that value reaches git. */
export function protocolOf(header: string | string[] | undefined): 'version=2' | null {
  const v = Array.isArray(header) ? header.join(':') : header ?? '';
  return v.split(':').some((p) => p.trim() === 'version=2') ? 'version=2' : null;
}

/** One pkt-line: 4 hex digits of length (itself included), then the payload. */
export function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;
}

/** GET info/refs?service=git-upload-pack: the ref advertisement (v0: after the `# service` line). */
export function advertise(req: IncomingMessage, res: ServerResponse, o: UploadPackOptions): Promise<void> {
  const protocol = protocolOf(req.headers['git-protocol']);
  const prefix = protocol ? '' : `${pktLine('# service=git-upload-pack\n')}0000`;
  return run(['--advertise-refs'], null, res, 'application/x-git-upload-pack-advertisement', prefix, protocol, o);
}

/** POST git-upload-pack: the request body (gzip or plain) into upload-pack, its pack out to the client. */
export function uploadPack(req: IncomingMessage, res: ServerResponse, o: UploadPackOptions): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-git-upload-pack-request') throw new HttpError(415, 'Content-Type must be application/x-git-upload-pack-request');
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding && encoding !== 'gzip' && encoding !== 'identity') throw new HttpError(415, `Content-Encoding ${encoding} is not supported`);
  return run([], { req, gzip: encoding === 'gzip' }, res, 'application/x-git-upload-pack-result', '', protocolOf(req.headers['git-protocol']), o);
}

// Spawn upload-pack; the response head is written with its first bytes, so a git that fails at once
// becomes a JSON error. The client going away kills the child; so does the timeout.
function run(args: string[], input: { req: IncomingMessage; gzip: boolean } | null, res: ServerResponse, contentType: string, prefix: string, protocol: string | null, o: UploadPackOptions): Promise<void> {
  const child = spawn('git', [...hardenedArgs(o.gitdir), '-c', 'uploadpack.allowAnySHA1InWant=false', 'upload-pack', '--stateless-rpc', '--strict', ...args, o.gitdir], {
    env: { ...gitBaseEnv(), ...(protocol ? { GIT_PROTOCOL: protocol } : {}) },
    stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const stdout = child.stdout!;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { if (stderr.length < 4096) stderr += d.toString('utf8'); });
  const kill = () => { if (child.exitCode === null) child.kill('SIGKILL'); };
  const timer = setTimeout(kill, o.timeoutMs ?? 600_000);
  // The client went away before the answer was complete: nobody will read the rest.
  res.once('close', () => { if (!res.writableFinished) kill(); });
  if (input) feed(input.req, input.gzip, child.stdin!, o.maxRequestBytes ?? 16 << 20, kill, o.log);
  return new Promise<void>((resolve, reject) => {
    let started = false;
    const start = () => {
      started = true;
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache, max-age=0, must-revalidate', expires: 'Fri, 01 Jan 1980 00:00:00 GMT', pragma: 'no-cache' });
      if (prefix) res.write(prefix);
    };
    stdout.once('data', (first: Buffer) => {
      stdout.pause();
      start();
      res.write(first);
      pipeline(stdout, res, () => undefined);
    });
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0 && !res.destroyed) o.log.warn(`git upload-pack ended ${code ?? signal}: ${stderr.trim().slice(0, 500)}`);
      if (started || res.destroyed) return resolve();
      if (code === 0) { start(); res.end(); return resolve(); }
      // Nothing was sent yet: a JSON error. A request body upload-pack cannot read is the client's fault.
      reject(new HttpError(input ? 400 : 500, `git upload-pack failed: ${stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`));
    });
  });
}

// The request body into the child's stdin: gunzipped when asked, cut (and the child killed) past `max`.
function feed(req: Readable, gzip: boolean, stdin: NodeJS.WritableStream, max: number, kill: () => void, log: Logger): void {
  let seen = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > max) done(new Error(`request body over ${max} bytes`));
      else done(null, chunk);
    },
  });
  const stages: NodeJS.ReadWriteStream[] = gzip ? [createGunzip(), cap] : [cap];
  pipeline([req, ...stages, stdin] as unknown as [Readable, NodeJS.WritableStream], (err) => {
    if (!err) return;
    log.warn(`git upload-pack request refused: ${err.message}`);
    kill();
  });
}
