// Git smart HTTP (stateless RPC): `git upload-pack` or `git receive-pack --stateless-rpc` over a
// repository, streamed both ways, behind the API's authentication. /state.git and /repo.git use it.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { HttpError } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { gitBaseEnv, hardenedArgs } from '../store/index.ts';

/** The two git services of smart HTTP. */
export type GitService = 'upload-pack' | 'receive-pack';

/** How one service run is started. */
export interface ServiceOptions {
  gitdir: string;
  log: Logger;
  /** Default upload-pack. */
  service?: GitService;
  /** More `-c key=value` settings for this run (hidden refs, receive checks). */
  config?: readonly string[];
  /** Largest request body, after gunzip (the wants and haves of a negotiation; the pack of a push). */
  maxRequestBytes?: number;
  /** The child is killed after this long (a stuck client must not hold a process forever). */
  timeoutMs?: number;
}
/** The options of /state.git (upload-pack). */
export type UploadPackOptions = ServiceOptions;

/** `Git-Protocol: version=2` asks for protocol v2; anything else is v0. Only that value reaches git. */
export function protocolOf(header: string | string[] | undefined): 'version=2' | null {
  const v = Array.isArray(header) ? header.join(':') : header ?? '';
  return v.split(':').some((p) => p.trim() === 'version=2') ? 'version=2' : null;
}

/** One pkt-line: 4 hex digits of length (itself included), then the payload. */
export function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;
}

// Settings of each service: upload-pack hands out advertised tips only; receive-pack checks what it gets and deletes nothing.
const SERVICE_CONFIG: Record<GitService, string[]> = {
  'upload-pack': ['uploadpack.allowAnySHA1InWant=false'],
  'receive-pack': ['receive.fsckObjects=true', 'receive.denyDeletes=true', 'receive.autogc=false', 'receive.updateServerInfo=false'],
};

/** GET info/refs?service=git-<service>: the ref advertisement (v0: after the `# service` line). */
export function advertise(req: IncomingMessage, res: ServerResponse, o: ServiceOptions): Promise<void> {
  const service = o.service ?? 'upload-pack';
  // receive-pack speaks v0 only; a v2 request falls back to it.
  const protocol = service === 'upload-pack' ? protocolOf(req.headers['git-protocol']) : null;
  const prefix = protocol ? '' : `${pktLine(`# service=git-${service}\n`)}0000`;
  return run(['--advertise-refs'], null, res, `application/x-git-${service}-advertisement`, prefix, protocol, o);
}

/** POST git-<service>: the request body (gzip or plain) into the service, its answer out to the client. */
export function serviceRpc(req: IncomingMessage, res: ServerResponse, o: ServiceOptions, body?: Readable): Promise<void> {
  const service = o.service ?? 'upload-pack';
  assertRequestType(req, service);
  const encoding = contentEncoding(req);
  const protocol = service === 'upload-pack' ? protocolOf(req.headers['git-protocol']) : null;
  return run([], { req: body ?? req, gzip: !body && encoding === 'gzip' }, res, `application/x-git-${service}-result`, '', protocol, o);
}

/** POST git-upload-pack (the /state.git name of `serviceRpc`). */
export function uploadPack(req: IncomingMessage, res: ServerResponse, o: UploadPackOptions): Promise<void> {
  return serviceRpc(req, res, { ...o, service: 'upload-pack' });
}

/** 415 unless the request is a `git-<service>` stateless RPC request. */
export function assertRequestType(req: IncomingMessage, service: GitService): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== `application/x-git-${service}-request`) throw new HttpError(415, `Content-Type must be application/x-git-${service}-request`);
}

/** The request's Content-Encoding: gzip or none; anything else is a 415. */
export function contentEncoding(req: IncomingMessage): 'gzip' | null {
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding && encoding !== 'gzip' && encoding !== 'identity') throw new HttpError(415, `Content-Encoding ${encoding} is not supported`);
  return encoding === 'gzip' ? 'gzip' : null;
}

/** Response headers of every smart HTTP answer (never cached). */
export function gitHead(contentType: string): Record<string, string> {
  return { 'content-type': contentType, 'cache-control': 'no-cache, max-age=0, must-revalidate', expires: 'Fri, 01 Jan 1980 00:00:00 GMT', pragma: 'no-cache' };
}

// Spawn the service; the response head is written with its first bytes, so a git that fails at once
// becomes a JSON error. The client going away kills the child; so does the timeout.
function run(args: string[], input: { req: Readable; gzip: boolean } | null, res: ServerResponse, contentType: string, prefix: string, protocol: string | null, o: ServiceOptions): Promise<void> {
  const service = o.service ?? 'upload-pack';
  const config = [...SERVICE_CONFIG[service], ...(o.config ?? [])].flatMap((kv) => ['-c', kv]);
  const child = spawn('git', [...hardenedArgs(o.gitdir), ...config, service, '--stateless-rpc', ...(service === 'upload-pack' ? ['--strict'] : []), ...args, o.gitdir], {
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
  if (input) feed(input.req, input.gzip, child.stdin!, o.maxRequestBytes ?? 16 << 20, kill, o.log, service);
  return new Promise<void>((resolve, reject) => {
    let started = false;
    const start = () => {
      started = true;
      res.writeHead(200, gitHead(contentType));
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
      if (code !== 0 && !res.destroyed) o.log.warn(`git ${service} ended ${code ?? signal}: ${stderr.trim().slice(0, 500)}`);
      if (started || res.destroyed) return resolve();
      if (code === 0) { start(); res.end(); return resolve(); }
      // Nothing was sent yet: a JSON error. A request body the service cannot read is the client's fault.
      reject(new HttpError(input ? 400 : 500, `git ${service} failed: ${stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`));
    });
  });
}

// The request body into the child's stdin: gunzipped when asked, cut (and the child killed) past `max`.
function feed(req: Readable, gzip: boolean, stdin: NodeJS.WritableStream, max: number, kill: () => void, log: Logger, service: GitService): void {
  const stages: NodeJS.ReadWriteStream[] = gzip ? [createGunzip(), byteCap(max)] : [byteCap(max)];
  pipeline([req, ...stages, stdin] as unknown as [Readable, NodeJS.WritableStream], (err) => {
    if (!err) return;
    log.warn(`git ${service} request refused: ${err.message}`);
    kill();
  });
}

/** A pass-through that fails once more than `max` bytes went through it. */
export function byteCap(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > max) done(new Error(`request body over ${max} bytes`));
      else done(null, chunk);
    },
  });
}
