// `/repo.git`: the code repository over git's smart HTTP, for cluster nodes. A node fetches the base
// branch (its clone stays current) and pushes refs/heads/agent/<sid> of the sessions it holds; the
// server then runs gates and merges as for local agents (DECISIONS.md Cluster: workers).
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Type } from '../lib/typebox.ts';
import { badRequest, forbidden } from '../lib/http-error.ts';
import type { Logger } from '../lib/log.ts';
import { defineRoute, RAW, type Principal, type Route } from '../lib/route.ts';
import { advertise, assertRequestType, byteCap, contentEncoding, gitHead, serviceRpc, type GitService } from '../smart-http/index.ts';
import { judgePush, readCommandSection, refusalReport, type CommandSection } from './push-gate.ts';

/** Who may do what on /repo.git; the cluster domain plugs in how a principal maps to a node. */
export interface RepoAccess {
  /** The cluster node a principal speaks for (a node token), else null. */
  nodeOf(p: Principal): string | null;
  /** Whether a principal may fetch the code: nodes, the cluster secret, admins. */
  mayFetch(p: Principal): boolean;
  /** Session ids of the tasks a node holds now (claimed or in progress by it). */
  heldSessions(nodeId: string): ReadonlySet<string>;
}

export interface RepoDeps extends RepoAccess {
  /** The repository's git dir (the common dir of the server's checkout). */
  gitdir: string;
  /** The branch agents fork from and merge into: the only one a fetch sees. */
  base(): Promise<string>;
  log: Logger;
  /** Largest push, after gunzip (default 256 MiB). */
  maxPushBytes?: number;
}

const SERVICE = Type.Object({ service: Type.Optional(Type.String({ maxLength: 64 })) });
const GIT_BODY = { description: 'git smart HTTP stream', contentType: 'application/octet-stream' };
const ERRORS = { 401: { description: 'Missing or invalid token' }, 403: { description: 'Not a cluster node (push), or not allowed to fetch' } };
// How much of a push is read before its command list must have ended.
const COMMANDS_MAX = 1 << 20;

/** GET info/refs, POST git-upload-pack (fetch the base), POST git-receive-pack (push held agent branches). */
export function repoGitRoutes(deps: RepoDeps): Route[] {
  return [
    defineRoute({
      method: 'GET', path: '/repo.git/info/refs', operationId: 'repoGitRefs', tags: ['cluster'], access: 'task', query: SERVICE,
      summary: 'Ref advertisement of the code repository for cluster nodes (fetch: the base branch; push: agent branches the node holds)',
      responses: { 200: GIT_BODY, ...ERRORS },
      handler: async ({ req, res, query, principal }) => {
        const service = serviceOf(query.service);
        await advertise(req, res, { ...(await optionsFor(deps, principal, service)), service });
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/repo.git/git-upload-pack', operationId: 'repoGitUploadPack', tags: ['cluster'], access: 'task',
      summary: 'Packs of the base branch for a node\'s clone (stateless RPC, streamed)',
      responses: { 200: GIT_BODY, ...ERRORS, 415: { description: 'Not a git-upload-pack request' } },
      handler: async ({ req, res, principal }) => {
        await serviceRpc(req, res, { ...(await optionsFor(deps, principal, 'upload-pack')), service: 'upload-pack' });
        return RAW;
      },
    }),
    defineRoute({
      method: 'POST', path: '/repo.git/git-receive-pack', operationId: 'repoGitReceivePack', tags: ['cluster'], access: 'task',
      summary: 'Push of refs/heads/agent/<sid> for sessions the node holds; any other ref is rejected',
      responses: { 200: GIT_BODY, ...ERRORS, 415: { description: 'Not a git-receive-pack request' } },
      handler: async ({ req, res, principal }) => {
        const o = await optionsFor(deps, principal, 'receive-pack');
        assertRequestType(req, 'receive-pack');
        const max = deps.maxPushBytes ?? 256 << 20;
        const body = contentEncoding(req) === 'gzip' ? req.pipe(createGunzip()) : req;
        const { section, stream } = await commandSection(body);
        if (section.kind !== 'ok') throw badRequest(`not a git push: ${section.kind === 'invalid' ? section.why : 'the command list did not end'}`);
        const refused = judgePush(section.commands, deps.heldSessions(deps.nodeOf(principal)!));
        if (refused) {
          deps.log.warn(`push by ${principal.actor} refused: ${[...refused].map(([ref, why]) => `${ref} (${why})`).join('; ').slice(0, 500)}`);
          // The pack is read and dropped (the client sends it whole before it reads the answer).
          stream.pipe(byteCap(max)).on('error', () => req.destroy()).resume();
          res.writeHead(200, gitHead('application/x-git-receive-pack-result'));
          res.end(refusalReport(refused, section.capabilities));
          return RAW;
        }
        await serviceRpc(req, res, { ...o, service: 'receive-pack', maxRequestBytes: max }, stream);
        deps.log.info(`push by ${principal.actor}: ${section.commands.map((c) => `${c.ref} ${c.newId.slice(0, 12)}`).join(', ')}`);
        return RAW;
      },
    }),
  ];
}

function serviceOf(name: string | undefined): GitService {
  if (name === 'git-upload-pack') return 'upload-pack';
  if (name === 'git-receive-pack') return 'receive-pack';
  throw forbidden('only the git-upload-pack and git-receive-pack services are served (smart HTTP)');
}

// Who may run the service, and the refs it shows: the base branch to fetchers; base and held agent branches to a pushing node.
async function optionsFor(deps: RepoDeps, principal: Principal, service: GitService) {
  const node = deps.nodeOf(principal);
  if (service === 'receive-pack' && node === null) throw forbidden('/repo.git accepts pushes from cluster nodes only (a node token)');
  if (service === 'upload-pack' && node === null && !deps.mayFetch(principal)) throw forbidden('/repo.git serves cluster nodes only');
  const base = await deps.base();
  const shown = [`refs/heads/${base}`, ...(node === null || service === 'upload-pack' ? [] : [...deps.heldSessions(node)].map((s) => `refs/heads/agent/${s}`))];
  const key = service === 'upload-pack' ? 'uploadpack.hideRefs' : 'receive.hideRefs';
  return { gitdir: deps.gitdir, log: deps.log, config: [`${key}=refs`, ...shown.map((r) => `${key}=!${r}`)] };
}

// Read the push up to the end of its command list; the bytes read are put back, so git gets the whole request.
function commandSection(body: Readable): Promise<{ section: CommandSection; stream: Readable }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (section: CommandSection) => {
      body.off('readable', onReadable).off('end', onEnd).off('error', reject);
      body.unshift(buf);
      resolve({ section, stream: body });
    };
    const onReadable = () => {
      for (let chunk: Buffer | null; (chunk = body.read() as Buffer | null) !== null;) {
        buf = Buffer.concat([buf, chunk]);
        const section = readCommandSection(buf);
        if (section.kind !== 'incomplete') return done(section);
        if (buf.length > COMMANDS_MAX) return done({ kind: 'invalid', why: 'command list too long' });
      }
    };
    const onEnd = () => done(readCommandSection(buf));
    body.on('readable', onReadable).once('end', onEnd).once('error', reject);
  });
}
